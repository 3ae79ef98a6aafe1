#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ui_render.py URL RUNS — real (not virtual) render times of the placement map page.

Starts headless Chromium once with the DevTools protocol on a pipe
(tests/e2e/cdp.py), then RUNS times opens URL in a fresh tab and waits until
the page marks its first answer completely drawn (<body data-render-ms>).  Prints one line per run:

    render_ms draw_ms drawn_hosts longest_task_ms

render_ms is measured by the page from navigation start (fetch, JSON parse,
DOM and every canvas drawn); draw_ms from the answer's arrival;
longest_task_ms the longest task that blocked the page (0: none over 50 ms).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from cdp import Browser  # noqa: E402


def measure(b, url, timeout=120):
    target, session = b.open(url)
    expr = ("[document.body && document.body.getAttribute('data-render-ms'),"
            " document.body && document.body.getAttribute('data-draw-ms'),"
            " document.body && document.body.getAttribute('data-drawn-hosts'),"
            " document.body && document.body.getAttribute('data-longest-task-ms')]")
    try:
        b.wait_for(session, "document.body && document.body.getAttribute('data-render-ms')",
                   timeout)
        time.sleep(0.2)  # long-task entries arrive after the task
        val = b.evaluate(session, expr)
        return val[:3] + [val[3] or "0"]
    finally:
        b.call("Target.closeTarget", {"targetId": target})


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    b = Browser()
    try:
        for _ in range(int(argv[2])):
            print(*measure(b, argv[1]), flush=True)
    finally:
        b.close()


if __name__ == "__main__":
    main(sys.argv)
