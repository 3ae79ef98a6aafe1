#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ui_render.py URL RUNS — real (not virtual) render times of the placement map page.

Starts headless Chromium once with the DevTools protocol on a pipe
(--remote-debugging-pipe: NUL-terminated JSON messages on fds 3 and 4), then
RUNS times opens URL in a fresh tab and waits until the page marks its first
answer completely drawn (<body data-render-ms>).  Prints one line per run:

    render_ms draw_ms drawn_hosts longest_task_ms

render_ms is measured by the page from navigation start (fetch, JSON parse,
DOM and every canvas drawn); draw_ms from the answer's arrival;
longest_task_ms the longest task that blocked the page (0: none over 50 ms).
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="podkernel-ui-bench.")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # high copies, so the dup2 onto 3 and 4 in the child cannot clobber them
        r_hi = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 20)
        w_hi = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 20)

        def child():
            os.dup2(r_hi, 3)
            os.dup2(w_hi, 4)

        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
             "--window-size=1400,1000", "about:blank"],
            preexec_fn=child, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        for fd in (to_child_r, from_child_w, r_hi, w_hi):
            os.close(fd)
        self.buf = b""
        self.next_id = 0

    def call(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.next_id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium exited")
            self.buf += chunk
        raise RuntimeError(f"{method}: no answer in {timeout} s")

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def measure(b, url, timeout=120):
    target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    b.call("Page.navigate", {"url": url}, session)
    expr = ("[document.body && document.body.getAttribute('data-render-ms'),"
            " document.body && document.body.getAttribute('data-draw-ms'),"
            " document.body && document.body.getAttribute('data-drawn-hosts'),"
            " document.body && document.body.getAttribute('data-longest-task-ms')]")
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            r = b.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
            val = r.get("result", {}).get("value") or [None, None, None, None]
            if val[0] is not None:
                time.sleep(0.2)  # long-task entries arrive after the task
                r = b.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
                val = r["result"]["value"]
                return val[:3] + [val[3] or "0"]
            time.sleep(0.05)
        raise RuntimeError(f"{url}: not drawn in {timeout} s")
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
