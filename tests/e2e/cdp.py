#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cdp.py — a minimal client of the Chrome DevTools protocol for the tests and
benchmarks of the placement map (tests/e2e/ui_interact.py, tests/bench/ui_render.py).

Browser() starts headless Chromium with --remote-debugging-pipe (NUL-terminated
JSON messages on fds 3 and 4; no port, no websocket), call() sends one command
and waits for its answer, open() makes a tab and attaches to it, evaluate()
returns a JavaScript value, close() ends the browser and removes its profile.
"""
import fcntl
import json
import os
import shutil
import subprocess
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

    def open(self, url):
        """A new tab at url: (targetId, sessionId)."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.navigate", {"url": url}, session)
        return target, session

    def evaluate(self, session, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
        return r.get("result", {}).get("value")

    def wait_for(self, session, expr, timeout=60):
        """Poll expr until it is truthy; its value, or RuntimeError."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.evaluate(session, expr)
            if v:
                return v
            time.sleep(0.05)
        raise RuntimeError(f"{expr}: not true in {timeout} s")
