#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_ui_map.py — what the placement map must show, from the cluster's own objects.

  expected WORK                 per-cube host states from WORK/nodes.json and
                                WORK/pods.json (podctl get -o json), computed here
                                independently of podkerneld's map code
  dom WORK DOM.html             the page's DOM (chromium --dump-dom): every cube
                                listed with exactly the expected counts, every
                                domain drawn, data-drawn-hosts = all hosts
  json WORK placement.json      /ui/api/placement agrees with the objects too
  map PLACEMENT.json MAP.txt    podctl map --color never --width 1: per domain,
                                the glyphs drawn equal the document's counts
  render DOM.html HOSTS         the page drew HOSTS hosts and finished (prints
                                data-render-ms)
  list URL OUT                  every page of a list (following metadata.continue)
                                into OUT, with $PODKERNEL_TOKEN and $PODKERNEL_CA_FILE

Exit 1 with the differences on stderr when something does not match.
"""
import json
import math
import re
import os
import ssl
import sys
import urllib.parse
import urllib.request
from html.parser import HTMLParser

LEVEL = "topology.podkernel.dev/"
COORDS = LEVEL + "coords"
STATES = ("busy", "free", "cordoned", "unreachable")
GANG_SYMBOLS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789#")
GLYPH = {"busy": "\u2588", "free": "\u2591", "cordoned": "\u2592", "unreachable": "\u2573"}


def load(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    return d.get("items", d) if isinstance(d, dict) else d


def fail(msgs):
    for m in msgs[:40]:
        print("check_ui_map:", m, file=sys.stderr)
    sys.exit(1)


def expected(work):
    """{cube: {hosts, busy, free, cordoned, unreachable}} from the objects."""
    nodes = load(work + "/nodes.json")
    pods = load(work + "/pods.json")
    keys = {}
    for n in nodes:
        for k, v in (n["metadata"].get("labels") or {}).items():
            if k.startswith(LEVEL) and k != COORDS:
                keys.setdefault(k, set()).add(v)
    cube_key = max(keys, key=lambda k: (len(keys[k]), k)) if keys else None
    dom_key = min(keys, key=lambda k: (len(keys[k]), k)) if keys else None
    holding, requested = {}, {}
    for p in pods:
        node = p.get("spec", {}).get("nodeName")
        phase = p.get("status", {}).get("phase")
        if node and phase not in ("Succeeded", "Failed"):
            holding[node] = holding.get(node, 0) + 1
            req = requested.setdefault(node, {})
            for c in p["spec"].get("containers") or []:
                for r, q in ((c.get("resources") or {}).get("requests") or {}).items():
                    req[r] = req.get(r, 0) + milli(q)
    out = {}
    for n in nodes:
        labels = n["metadata"].get("labels") or {}
        dom = labels.get(dom_key, "-")
        cube = labels.get(cube_key, dom)
        taints = n.get("spec", {}).get("taints") or []
        ready = [c for c in n.get("status", {}).get("conditions") or [] if c.get("type") == "Ready"]
        if any(t.get("key") == "node.kubernetes.io/unreachable" for t in taints) or \
                (ready and ready[0].get("status") == "Unknown"):
            state = "unreachable"
        elif n.get("spec", {}).get("unschedulable"):
            state = "cordoned"
        elif holding.get(n["metadata"]["name"]):
            state = "busy"
        else:
            state = "free"
        c = out.setdefault(cube, {"domain": dom, "hosts": 0, "tainted": 0, "used": 0.0,
                                  **{s: 0 for s in STATES}})
        c["hosts"] += 1
        c[state] += 1
        # taints a person should see: not the cordon's or the unreachable one (states of their own)
        c["tainted"] += any(t.get("key") not in ("node.kubernetes.io/unreachable",
                                                 "node.kubernetes.io/unschedulable") for t in taints)
        c["used"] += fill(holding.get(n["metadata"]["name"], 0),
                          requested.get(n["metadata"]["name"], {}),
                          n.get("status", {}).get("allocatable") or {})
    return out


SUFFIX = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20,
          "Gi": 2**30, "Ti": 2**40}


def milli(q):
    """A quantity ("60", "500m", "400Gi") in milli-units."""
    q = str(q)
    for suf in sorted(SUFFIX, key=len, reverse=True):
        if q.endswith(suf):
            return round(float(q[:-len(suf)]) * SUFFIX[suf] * 1000)
    return round(float(q) * 1000)


def fill(pods, req, alloc):
    """How full a host is: the largest share of a resource its pods request
    against its allocatable (1 when they request nothing it advertises), to
    two decimals as the map draws it; 0 without pods."""
    if not pods:
        return 0.0
    shares = [req[r] / milli(alloc[r]) for r in req if req[r] > 0 and milli(alloc.get(r, 0)) > 0]
    return math.floor(min(max(shares), 1.0) * 100 + 0.5) / 100 if shares else 1.0


class CubeItems(HTMLParser):
    def __init__(self):
        super().__init__()
        self.cubes, self.domains, self.body, self.login_hidden = {}, {}, {}, None
        self.detail = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "li" and "data-cube" in a:
            self.cubes[a["data-cube"]] = {k[5:]: num(a["data-" + k[5:]])
                                          for k in a if k.startswith("data-") and k != "data-cube"}
        elif tag == "section" and "data-domain" in a:
            self.domains[a["data-domain"]] = a.get("data-drawn") == "1"
        elif tag == "body":
            self.body = a
        elif tag == "form" and a.get("id") == "login":
            self.login_hidden = "hidden" in a
        elif a.get("id") == "detail":
            self.detail = a


def num(v):
    return float(v) if "." in v else int(v)


def parse_dom(path):
    p = CubeItems()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def compare(want, got, what):
    errs = []
    for cube, w in sorted(want.items()):
        g = got.get(cube)
        if g is None:
            errs.append(f"{what}: cube {cube} missing")
            continue
        for k in ("hosts", "tainted") + STATES:
            if k in g and g.get(k) != w[k] or k not in g and k != "tainted":
                errs.append(f"{what}: cube {cube}: {k} {g.get(k)}, expected {w[k]}")
        # the page's sum of its hosts' fill (each to two decimals)
        if "used" in g and abs(g["used"] - w["used"]) > 0.005 + 1e-9:
            errs.append(f"{what}: cube {cube}: used {g['used']}, expected {w['used']:.2f}")
    for cube in sorted(set(got) - set(want)):
        errs.append(f"{what}: unexpected cube {cube}")
    return errs


def cmd_dom(work, html):
    want = expected(work)
    dom = parse_dom(html)
    errs = compare(want, dom.cubes, "page")
    undrawn = [d for d, drawn in dom.domains.items() if not drawn]
    if undrawn:
        errs.append(f"page: domains not drawn: {undrawn}")
    hosts = sum(c["hosts"] for c in want.values())
    if dom.body.get("data-drawn-hosts") != str(hosts):
        errs.append(f"page: data-drawn-hosts {dom.body.get('data-drawn-hosts')}, expected {hosts}")
    if errs:
        fail(errs)
    busy = sum(c["busy"] for c in want.values())
    print(f"page: {len(dom.cubes)} cubes in {len(dom.domains)} domains, {hosts} hosts, "
          f"{busy} busy: as the objects say")


def cmd_json(work, path):
    want = expected(work)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    got = {}
    for d in doc["domains"]:
        for c in d["cubes"]:
            got[c["name"]] = dict(c["counts"])
    errs = compare(want, got, "placement.json")
    if errs:
        fail(errs)


def cmd_map(placement, text):
    with open(placement, encoding="utf-8") as f:
        doc = json.load(f)
    with open(text, encoding="utf-8") as f:
        lines = f.read().split("\n")
    counts = {d["name"]: d["counts"] for d in doc["domains"]}
    errs, cur, seen, drawn, legend = [], None, {}, {}, {}
    for line in lines:
        m = re.match(r"^(\S)\1 \S+ \S+: (\d+) hosts$", line)
        if m and m.group(1) in GANG_SYMBOLS:
            if m.group(1) != "#" and m.group(1) in legend:
                errs.append(f"podctl map: symbol {m.group(1)} names two gangs")
            legend[m.group(1)] = legend.get(m.group(1), 0) + int(m.group(2))
        head = line.split("  ", 1)[0]
        if head in counts and "hosts:" in line:
            cur = head
            seen[cur] = {s: 0 for s in STATES}
            continue
        if not line.strip() or line.startswith(("largest free", "cluster:")):
            if line.startswith("cluster:"):
                cur = None
            continue
        if cur:
            for s in STATES:
                seen[cur][s] += line.count(GLYPH[s])
            # without colour a busy host is its gang's symbol (A-Z, a-z, 0-9, #)
            for ch in line:
                if ch in GANG_SYMBOLS:
                    seen[cur]["busy"] += 1
                    drawn[ch] = drawn.get(ch, 0) + 1
    for name, c in counts.items():
        if name not in seen:
            errs.append(f"podctl map: domain {name} not printed")
            continue
        for s in STATES:
            if seen[name][s] != 2 * c[s]:  # two columns per host
                errs.append(f"podctl map: {name}: {seen[name][s] // 2} {s} hosts drawn, "
                            f"the document says {c[s]}")
    for ch, n in legend.items():
        if drawn.get(ch, 0) != 2 * n:
            errs.append(f"podctl map: gang {ch} holds {n} hosts, {drawn.get(ch, 0) // 2} drawn")
    for ch in drawn:
        if ch not in legend:
            errs.append(f"podctl map: symbol {ch} drawn but not in the legend")
    if errs:
        fail(errs)
    print(f"podctl map: {len(seen)} domains, occupancy as /ui/api/placement says, "
          f"{len(legend)} gangs told apart by symbol")


def cmd_render(html, hosts):
    dom = parse_dom(html)
    b = dom.body
    errs = []
    if b.get("data-drawn-hosts") != hosts:
        errs.append(f"page drew {b.get('data-drawn-hosts')} hosts, expected {hosts}")
    undrawn = [d for d, drawn in dom.domains.items() if not drawn]
    if undrawn or not dom.domains:
        errs.append(f"domains not drawn: {len(undrawn)} of {len(dom.domains)}")
    if errs:
        fail(errs)
    print(b.get("data-render-ms"), b.get("data-draw-ms"))


def cmd_list(url, out):
    ctx = None
    if os.environ.get("PODKERNEL_CA_FILE"):
        ctx = ssl.create_default_context(cafile=os.environ["PODKERNEL_CA_FILE"])
    items, cont = [], ""
    while True:
        sep = "&" if "?" in url else "?"
        page = url + sep + "limit=5000" + ("&continue=" + urllib.parse.quote(cont) if cont else "")
        req = urllib.request.Request(page, headers={
            "Authorization": "Bearer " + os.environ.get("PODKERNEL_TOKEN", ""),
            "Accept": "application/json"})
        with urllib.request.urlopen(req, context=ctx, timeout=60) as r:
            d = json.load(r)
        items += d.get("items") or []
        cont = (d.get("metadata") or {}).get("continue")
        if not cont:
            break
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"items": items}, f)


def main(argv):
    cmds = {"dom": (cmd_dom, 2), "json": (cmd_json, 2), "map": (cmd_map, 2),
            "render": (cmd_render, 2), "list": (cmd_list, 2)}
    if len(argv) >= 2 and argv[1] == "expected" and len(argv) == 3:
        json.dump(expected(argv[2]), sys.stdout, indent=1)
        return
    if len(argv) < 2 or argv[1] not in cmds or len(argv) != 2 + cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmds[argv[1]][0](*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
