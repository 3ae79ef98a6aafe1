#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ui_interact.py URL DOMAIN HOST CMD... — the placement map under a real mouse.

Opens URL (the page with #token=...) in headless Chromium over the DevTools
protocol (cdp.py), waits until it is drawn, moves the mouse onto the first
host cell of DOMAIN's canvas and expects the tooltip to name HOST, clicks and
expects the host panel to show HOST with its pods.  Then it runs CMD (which
changes the cluster) and expects the page to show the map's next generation
without a reload.  Exit 1 on a mismatch.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402



def fail(msg):
    print("ui_interact:", msg, file=sys.stderr)
    sys.exit(1)


def main(url, domain, host, cmd):
    b = Browser()
    try:
        _, s = b.open(url)
        b.wait_for(s, "document.body.getAttribute('data-render-ms')")
        canvas = f"document.querySelector('section[data-domain=\"{domain}\"] canvas')"
        rect = json.loads(b.evaluate(s, f"JSON.stringify({canvas}.getBoundingClientRect())"))
        # where the first cube's first cell starts (below the cube's name)
        ox, oy = map(int, b.evaluate(s, f"{canvas}.getAttribute('data-origin')").split(","))
        x, y = rect["x"] + ox + 3, rect["y"] + oy + 3
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}, s)
        tip = b.wait_for(s, "!document.getElementById('tip').hidden && "
                            "document.getElementById('tip').textContent", 10)
        if not tip.startswith(host + " "):
            fail(f"tooltip over the first cell of {domain}: {tip!r}, expected {host}")
        for kind in ("mousePressed", "mouseReleased"):
            b.call("Input.dispatchMouseEvent",
                   {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}, s)
        shown = b.wait_for(s, "document.getElementById('detail').getAttribute('data-node')", 10)
        if shown != host:
            fail(f"click showed {shown!r}, expected {host}")
        pods = b.evaluate(s, "document.getElementById('detail').getAttribute('data-pods')")
        print(f"hover: {tip}")
        print(f"click: {host} with {pods} pods", flush=True)
        gen = b.evaluate(s, "document.body.getAttribute('data-generation')")
        if subprocess.call(cmd) != 0:
            fail(f"{cmd[0]} failed")
        newer = b.wait_for(s, f"document.body.getAttribute('data-generation') !== '{gen}' && "
                              "document.body.getAttribute('data-generation')", 20)
        print(f"live: generation {gen} -> {newer} without a reload")
    finally:
        b.close()


if __name__ == "__main__":
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
