#!/usr/bin/env python3
# Invariants of a scheduled cluster, read from `podctl get ... -o json` lists in
# DIR (nodes.json, pods.json, pgs.json, cpgs.json):
#  - every bound pod's node exists, and no node holds more than its allocatable
#    (every resource, and the pod count);
#  - gangs are all or nothing: a gang PodGroup that is not yet scheduled has
#    no bound pod (a scheduled one may have lost pods to disruptions since);
#  - a scheduled gang CompositePodGroup has at least minGroupCount scheduled
#    children;
#  - topology: all bound pods under a group with a topology key sit on nodes
#    with one and the same value of that label.
# Prints what is wrong and exits 1, or exits 0.
import json
import os
import sys

UNITS = [("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30), ("Ti", 2**40), ("k", 1e3), ("M", 1e6),
         ("G", 1e9), ("T", 1e12), ("m", 1e-3)]


def qty(s):
    s = str(s)
    for suf, mult in UNITS:
        if s.endswith(suf):
            return float(s[: -len(suf)]) * mult
    return float(s)


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)["items"]


def key(o):
    m = o["metadata"]
    return (m.get("namespace", "default"), m["name"])


def cond(o, t):
    for c in o.get("status", {}).get("conditions", []) or []:
        if c.get("type") == t:
            return c.get("status")
    return None


def main(d):
    errors = []
    nodes = {n["metadata"]["name"]: n for n in load(d, "nodes.json")}
    pods = load(d, "pods.json")
    pgs = {key(g): g for g in load(d, "pgs.json")}
    cpgs = {key(g): g for g in load(d, "cpgs.json")}

    used = {}
    for p in pods:
        node = p["spec"].get("nodeName")
        if not node:
            continue
        if node not in nodes:
            errors.append(f"pod {key(p)} bound to missing node {node}")
            continue
        u = used.setdefault(node, {"pods": 0})
        u["pods"] += 1
        for c in p["spec"].get("containers", []):
            for r, v in (c.get("resources", {}).get("requests", {}) or {}).items():
                u[r] = u.get(r, 0) + qty(v)
    for node, u in used.items():
        alloc = nodes[node].get("status", {}).get("allocatable", {})
        for r, v in u.items():
            have = qty(alloc.get(r, "110" if r == "pods" else "0"))
            if v > have + 1e-9:
                errors.append(f"node {node} overcommitted: {r} {v} > {have}")

    # group membership: pods per leaf, leaves and composites per parent
    members = {}
    for p in pods:
        g = (p["spec"].get("schedulingGroup") or {}).get("podGroupName")
        if g:
            members.setdefault((key(p)[0], g), []).append(p)
    children = {}
    for k, g in list(pgs.items()) + list(cpgs.items()):
        parent = g["spec"].get("parentCompositePodGroupName")
        if parent:
            children.setdefault((k[0], parent), []).append(k)

    def subtree_pods(k, depth=0):
        out = list(members.get(k, []))
        if depth < 8:
            for c in children.get(k, []):
                out += subtree_pods(c, depth + 1)
        return out

    for k, g in pgs.items():
        gang = g["spec"].get("schedulingPolicy", {}).get("gang")
        bound = [p for p in members.get(k, []) if p["spec"].get("nodeName")]
        if gang is not None:
            need = gang.get("minCount", 1)
            # once scheduled (terminal), disruptions may take pods away
            if bound and len(bound) < need and cond(g, "PodGroupInitiallyScheduled") != "True":
                errors.append(f"gang {k}: {len(bound)} bound < minCount {need}, not scheduled")
    for k, g in cpgs.items():
        gang = g["spec"].get("schedulingPolicy", {}).get("gang")
        if gang is None or cond(g, "CompositePodGroupInitiallyScheduled") != "True":
            continue
        done = 0
        for c in children.get(k, []):
            cg = pgs.get(c) or cpgs.get(c)
            if cond(cg, "PodGroupInitiallyScheduled") == "True" or \
               cond(cg, "CompositePodGroupInitiallyScheduled") == "True":
                done += 1
        if done < gang.get("minGroupCount", 1):
            errors.append(f"composite gang {k}: {done} scheduled children < minGroupCount")

    for k, g in list(pgs.items()) + list(cpgs.items()):
        topo = (g["spec"].get("schedulingConstraints") or {}).get("topology") or []
        if not topo:
            continue
        label = topo[0].get("key") or topo[0].get("level")
        values = set()
        for p in subtree_pods(k):
            node = p["spec"].get("nodeName")
            if node in nodes:
                values.add(nodes[node]["metadata"].get("labels", {}).get(label, "<missing>"))
        if len(values) > 1 or "<missing>" in values:
            errors.append(f"group {k}: pods span {label} values {sorted(values)}")

    for e in errors:
        print("check_placement:", e)
    bound = sum(1 for p in pods if p["spec"].get("nodeName"))
    print(f"check_placement: {len(nodes)} nodes, {len(pods)} pods ({bound} bound), "
          f"{len(pgs)} PodGroups, {len(cpgs)} CompositePodGroups: "
          f"{'ok' if not errors else str(len(errors)) + ' violations'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
