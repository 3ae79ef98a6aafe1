#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ui_operator.py URL TOKEN WORK OUTDIR — the placement map's operator features
in headless Chromium (DevTools protocol, cdp.py).

WORK holds nodes.json, pods.json (every item of the lists) and
placement.json (/ui/api/placement).  What the page must show is computed
here from the Nodes and Pods (check_ui_map.expected), not taken from
podkerneld: the rejected-token message, the time of the data in the header,
an overview tile per domain with its utilisation, each cube's fill and
tainted hosts, search by host, gang and pod, the two filters, the slice
drawn as one box, and different colours for gangs in the same or
neighbouring cubes.  Screenshots: OUTDIR/ui-map-overview.png,
ui-map-search.png, ui-map-filter.png.  Exit 1 with the differences.
"""
import base64
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402
import check_ui_map  # noqa: E402

errors = []


def check(ok, msg):
    if not ok:
        errors.append(msg)


def load(work, name):
    with open(os.path.join(work, name), encoding="utf-8") as f:
        return json.load(f)


def host_rows(work):
    """name -> (domain, fill) and per-domain hosts, from the objects."""
    nodes = load(work, "nodes.json")["items"]
    pods = load(work, "pods.json")["items"]
    doc = load(work, "placement.json")
    dkey = doc["levels"]["domain"]
    holding, req = {}, {}
    for p in pods:
        n = p["spec"].get("nodeName")
        if n and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            holding[n] = holding.get(n, 0) + 1
            r = req.setdefault(n, {})
            for c in p["spec"].get("containers") or []:
                for k, q in ((c.get("resources") or {}).get("requests") or {}).items():
                    r[k] = r.get(k, 0) + check_ui_map.milli(q)
    hosts = {}
    for n in nodes:
        name = n["metadata"]["name"]
        dom = (n["metadata"].get("labels") or {}).get(dkey, "-")
        f = check_ui_map.fill(holding.get(name, 0), req.get(name, {}),
                              n["status"].get("allocatable") or {})
        hosts[name] = (dom, f, n)
    return hosts, pods


def expected_search(text, hosts, pods):
    """The hosts a search for text selects: by name, by gang (the group or its
    root), by pod (namespace/name): as the page documents it."""
    t = text.lower()
    out = {h for h in hosts if t in h.lower()}
    for p in pods:
        ns, name = p["metadata"].get("namespace", "default"), p["metadata"]["name"]
        node = p["spec"].get("nodeName")
        group = (p["spec"].get("schedulingGroup") or {}).get("podGroupName")
        if not node:
            continue
        if text in f"{ns}/{name}" or (group and t in f"{ns}/{group}".lower()):
            out.add(node)
    return out


def neighbour_pairs(doc):
    """Pairs of root gangs holding hosts in one cube or in neighbouring cubes."""
    groups = doc["groups"]
    pairs = set()
    for d in doc["domains"]:
        at = {}
        for c in d["cubes"]:
            at[(c["col"], c["row"])] = {groups[h["group"]]["root"] for h in c["hosts"]
                                        if "group" in h}
        for (col, row), mine in at.items():
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for a in mine:
                        for b in at.get((col + dx, row + dy), ()):
                            if a < b:
                                pairs.add((a, b))
    return pairs


def shot(b, s, path):
    data = b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False}, s)
    with open(path, "wb") as f:
        f.write(base64.b64decode(data["data"]))


def selection(b, s, text=None, pending=False, marked=False):
    """Set the search and filters; (count, matches text, visible domains, result hosts)."""
    b.evaluate(s, "document.getElementById('search').value = '';"
                  "document.getElementById('f-pending').checked = false;"
                  "document.getElementById('f-marked').checked = false;"
                  "document.getElementById('search-form').requestSubmit(); true")
    b.wait_for(s, "!document.getElementById('matches').hasAttribute('data-count')", 10)
    b.evaluate(s, f"document.getElementById('search').value = {json.dumps(text or '')};"
                  f"document.getElementById('f-pending').checked = {json.dumps(pending)};"
                  f"document.getElementById('f-marked').checked = {json.dumps(marked)};"
                  "document.getElementById('f-marked').dispatchEvent(new Event('change'));"
                  "document.getElementById('search-form').requestSubmit(); true")
    if text or pending or marked:
        b.wait_for(s, "document.getElementById('matches').hasAttribute('data-count') && "
                      "!document.getElementById('matches').textContent.includes('searching')", 15)
    return json.loads(b.evaluate(s, """JSON.stringify([
        Number(document.getElementById('matches').getAttribute('data-count')),
        document.getElementById('matches').textContent,
        [...document.querySelectorAll('section.domain')].filter((e) => !e.hidden).map((e) => e.dataset.domain),
        [...document.querySelectorAll('#results li[data-host]')].map((e) => e.dataset.host)])"""))


def check_token(b, url):
    _, s = b.open(url + "#token=not-a-token")
    b.wait_for(s, "document.body.getAttribute('data-auth')", 30)
    auth, visible, text = json.loads(b.evaluate(s, "JSON.stringify([document.body.dataset.auth,"
                                                   "!document.getElementById('login-error').hidden,"
                                                   "document.getElementById('login-error').textContent])"))
    check(auth == "rejected" and visible and "rejected" in text,
          f"a wrong token: auth {auth!r}, message shown {visible}: {text!r}")


def check_page(b, s, doc, hosts, work):
    status, when = json.loads(b.evaluate(s, "JSON.stringify([document.getElementById('status').textContent,"
                                            "document.body.dataset.time])"))
    check(status.startswith("data of ") and str(doc["generation"]) not in status,
          f"header: {status!r} (expected the time of the data, no generation)")
    t = datetime.datetime.strptime(when or "", "%Y-%m-%dT%H:%M:%SZ")
    check(abs((datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - t).total_seconds()) < 600 and when >= doc["time"],
          f"data-time {when!r} is not the document's time {doc['time']!r} or later")
    # overview: a tile per domain with the share in use the objects give
    tiles = dict(json.loads(b.evaluate(s, "JSON.stringify([...document.querySelectorAll('#overview .tile')]"
                                          ".map((t) => [t.dataset.domain, Number(t.dataset.util)]))")))
    per_dom = {}
    for dom, f, _ in hosts.values():
        per_dom.setdefault(dom, []).append(f)
    check(set(tiles) == set(per_dom), f"overview tiles {sorted(tiles)}, domains {sorted(per_dom)}")
    for dom, fills in per_dom.items():
        want = sum(fills) / len(fills)
        check(abs(tiles.get(dom, -1) - want) <= 0.006,
              f"overview {dom}: utilisation {tiles.get(dom)}, the objects give {want:.3f}")
    check(any(0 < f < 1 for _, f, _ in hosts.values()), "no host is partly used (the test's setup)")
    # each cube's fill and tainted hosts: check_ui_map's DOM check
    html = b.evaluate(s, "document.documentElement.outerHTML")
    with open(os.path.join(work, "operator.html"), "w", encoding="utf-8") as f:
        f.write(html)
    dom_cubes = check_ui_map.parse_dom(os.path.join(work, "operator.html")).cubes
    errors.extend(check_ui_map.compare(check_ui_map.expected(work), dom_cubes, "page"))
    # the slice: one box
    slices = " ".join(json.loads(b.evaluate(s, "JSON.stringify([...document.querySelectorAll('section.domain')]"
                                               ".map((e) => e.dataset.slices || ''))")))
    check("tpu/slice-a:box" in slices.split(), f"the slice is not drawn as one box: {slices!r}")
    # colours: gangs in one cube or neighbouring cubes differ
    colour = dict(json.loads(b.evaluate(s, "JSON.stringify([...document.querySelectorAll('#legend li[data-color]')]"
                                           ".map((e) => [e.dataset.group, e.dataset.color]))")))
    pairs = neighbour_pairs(doc)
    names = {g["id"]: g["namespace"] + "/" + g["name"] for g in doc["groups"]}
    check(pairs, "no two gangs are neighbours (the test's setup)")
    for a, b_ in pairs:
        ca, cb = colour.get(names[a]), colour.get(names[b_])
        check(ca and cb and ca != cb, f"neighbouring gangs {names[a]} and {names[b_]}: colours {ca}, {cb}")


def check_search(b, s, hosts, pods, doc, out):
    doms = {dom for dom, _, _ in hosts.values()}
    for text in ("tpu-ss1-h20", "slice-a", "one-quarter", "TRAIN-B"):
        want = expected_search(text, hosts, pods)
        n, msg, visible, listed = selection(b, s, text)
        check(n == len(want), f"search {text!r}: {n} hosts ({msg}), expected {len(want)}")
        check(set(listed) <= want and (len(listed) == min(20, len(want))),
              f"search {text!r}: results {listed[:5]}..., expected among {sorted(want)[:5]}...")
        check(set(visible) == {hosts[h][0] for h in want},
              f"search {text!r}: domains shown {visible}, expected {sorted({hosts[h][0] for h in want})}")
        if text == "slice-a":
            shot(b, s, os.path.join(out, "ui-map-search.png"))
    check("tpu-ss1-h200" in selection(b, s, "one-quarter")[3], "a pod search does not list its host")
    # cordoned or tainted hosts
    marked = {h for h, (_, _, n) in hosts.items() if n.get("spec", {}).get("unschedulable") or
              any(t["key"] != "node.kubernetes.io/unschedulable" for t in n.get("spec", {}).get("taints") or [])}
    n, msg, visible, _ = selection(b, s, marked=True)
    check(n == len(marked) and len(marked) >= 2, f"filter cordoned/tainted: {n} ({msg}), expected {len(marked)}")
    shot(b, s, os.path.join(out, "ui-map-filter.png"))
    # pending gangs: too-big holds no host, and the page says so
    pend_hosts = {h["name"] for d in doc["domains"] for c in d["cubes"] for h in c["hosts"]
                  if "group" in h and doc["groups"][h["group"]]["root"] in doc["pending"]}
    n, msg, visible, _ = selection(b, s, pending=True)
    check(n == len(pend_hosts) and ("hold no host" in msg or "holds no host" in msg),
          f"filter pending: {n} ({msg}), expected {len(pend_hosts)} and the gangs without hosts named")
    n, msg, visible, _ = selection(b, s)
    check(n == 0 and not msg and set(visible) == doms, f"cleared: {n} {msg!r}, {len(visible)} domains")


def main(url, token, work, out):
    doc = load(work, "placement.json")
    hosts, pods = host_rows(work)
    b = Browser()
    try:
        check_token(b, url)
        _, s = b.open(url + "#token=" + token)
        b.wait_for(s, "document.body.getAttribute('data-render-ms')", 60)
        b.wait_for(s, "document.getElementById('status').textContent.startsWith('data of')", 10)
        check_page(b, s, doc, hosts, work)
        shot(b, s, os.path.join(out, "ui-map-overview.png"))
        check_search(b, s, hosts, pods, doc, out)
    finally:
        b.close()
    for e in errors[:40]:
        print("ui_operator:", e, file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"ui_operator: {len(hosts)} hosts, {len(doc['domains'])} domains: the operator's features agree "
          "with the objects")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
