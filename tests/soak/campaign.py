#!/usr/bin/env python3
"""Soak and chaos campaigns against podkerneld (loopback only).

  campaign.py soak  BIN WORK CYCLES MIXED_SECONDS
  campaign.py chaos BIN WORK SECONDS

soak: standalone podkerneld on a cluster of Nodes.  CYCLES times: batches of
gangs (a PodGroup and its pods) are created and old gangs deleted by four
writers while the server is killed with SIGKILL at a random moment; after
each restart every acknowledged create is there (unless its delete was
sent: a server killed between its commit and its reply applied a delete
that was never answered), no node holds more than it can (no overcommit) and no gang
has fewer bound pods than its minCount unless none (no partial gang).  Then
MIXED_SECONDS of mixed load (gangs created and deleted, lists, gets, merge
patches, short watches) while the server's RSS is sampled: the peak of the
last third may exceed the peak of the first third by at most
SOAK_GROWTH_MB (default 128).

chaos: attach mode.  A stand-in cluster (podkerneld --no-scheduling) and two
podkerneld attached to it with --leader-elect.  For SECONDS, at random: the
leader killed with SIGKILL (and restarted), the leader frozen with SIGSTOP
past its lease (and thawed), the stand-in killed with SIGKILL (and restarted
on its port and data), gangs created and deleted, and a foreign scheduler's
pods created and bound by the campaign itself (schedulerName foreign, on the
nodes labelled pool=foreign).  A watch of every pod checks all along that no
pod is bound twice or moved, no node is overcommitted and no foreign pod is
bound by anyone but the foreign scheduler; at the end, once the cluster is
calm, no gang is partially bound and every gang that fits is bound.

Prints what it did; exits 1 with "FAIL: ..." on a broken invariant.
"""
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

TOKEN = "campaign-admin-token"
NODE_CPU = 8
POD_CPU = 2
GANG = 4  # pods per gang, minCount
POD_PATH = "/api/v1/namespaces/default/pods"
PG_PATH = "/apis/scheduling.k8s.io/v1alpha3/namespaces/default/podgroups"


DIAGNOSE = []  # callables that print what helps on a failure


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    for d in DIAGNOSE:
        try:
            d()
        except Exception as e:  # a diagnosis must not hide the failure
            print("(diagnosis failed: %s)" % e, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


def log(msg):
    print(msg)
    sys.stdout.flush()


# ---- HTTP ---------------------------------------------------------------------------

class Api:
    def __init__(self, port):
        self.port = port

    def call(self, method, path, body=None, ctype="application/json", timeout=10):
        """(status, parsed body or None); status 0 when no answer came."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = {"Authorization": "Bearer " + TOKEN}
        data = None
        if body is not None:
            data = json.dumps(body)
            h["Content-Type"] = ctype
        try:
            c.request(method, path, data, h)
            r = c.getresponse()
            raw = r.read()
            try:
                return r.status, json.loads(raw) if raw else None
            except ValueError:
                return r.status, None
        except (OSError, http.client.HTTPException):
            return 0, None
        finally:
            c.close()

    def items(self, path):
        st, b = self.call("GET", path + "?limit=100000", timeout=30)
        if st != 200:
            return None, None
        return b["items"], b["metadata"]["resourceVersion"]


def node(name, pool):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"pool": pool}},
            "status": {"allocatable": {"cpu": str(NODE_CPU), "memory": "64Gi", "pods": "110"},
                       "capacity": {"cpu": str(NODE_CPU), "memory": "64Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def gang_objects(name, scheduler="podkernel", selector=None):
    pg = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
          "metadata": {"name": name},
          "spec": {"schedulingPolicy": {"gang": {"minCount": GANG}}}}
    pods = []
    for i in range(GANG):
        spec = {"schedulerName": scheduler, "schedulingGroup": {"podGroupName": name},
                "containers": [{"name": "c", "image": "x",
                                "resources": {"requests": {"cpu": str(POD_CPU)}}}]}
        if selector:
            spec["nodeSelector"] = selector
        pods.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "%s-%d" % (name, i)}, "spec": spec})
    return pg, pods


def cpu_of(pod):
    total = 0.0
    for c in pod.get("spec", {}).get("containers", []):
        v = c.get("resources", {}).get("requests", {}).get("cpu", "0")
        total += float(v[:-1]) / 1000 if v.endswith("m") else float(v)
    return total


def live(pod):
    return pod.get("status", {}).get("phase") not in ("Succeeded", "Failed")


def check_cluster(pods, pgs, nodes, deleting, where):
    """No overcommit, no partial gang (gangs being deleted aside)."""
    alloc = {n["metadata"]["name"]: float(n["status"]["allocatable"]["cpu"]) for n in nodes}
    used = {}
    bound = {}
    for p in pods:
        nn = p.get("spec", {}).get("nodeName")
        if not nn or not live(p):
            continue
        used[nn] = used.get(nn, 0) + cpu_of(p)
        g = p["spec"].get("schedulingGroup", {}).get("podGroupName")
        if g:
            bound[g] = bound.get(g, 0) + 1
    for n, u in used.items():
        if u > alloc.get(n, 0) + 1e-9:
            fail("%s: node %s holds %.1f CPUs of %.1f (overcommit)" % (where, n, u, alloc.get(n, 0)))
    for pg in pgs:
        g = pg["metadata"]["name"]
        if g in deleting:
            continue
        b = bound.get(g, 0)
        if 0 < b < GANG:
            fail("%s: gang %s has %d of its %d pods bound (partial gang)" % (where, g, b, GANG))
    return sum(bound.values())


def rss_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


# ---- processes ----------------------------------------------------------------------

class Proc:
    """A podkerneld; its log in WORK/NAME.log; port read from it."""

    def __init__(self, binary, work, name, args, port_pattern="serving on"):
        self.binary, self.work, self.name, self.args = binary, work, name, args
        self.pattern = port_pattern
        self.p = None
        self.port = None

    def start(self, port=0, wait_line=None):
        logf = os.path.join(self.work, self.name + ".log")
        args = [a.replace("@PORT@", str(port)) for a in self.args]
        env = dict(os.environ)
        # the sanitizer's quarantine would hide what is freed: RSS must show it
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=16"
        for _ in range(50):
            with open(logf, "a") as f:
                f.write("--- start\n")
            mark = os.path.getsize(logf)
            with open(logf, "a") as out:
                self.p = subprocess.Popen([self.binary] + args, stdout=out, stderr=out, env=env)
            deadline = time.time() + 30
            while time.time() < deadline:
                with open(logf) as f:
                    f.seek(mark)
                    text = f.read()
                got = None
                for line in text.splitlines():
                    if self.pattern in line and "(port " in line:
                        got = int(line.split("(port ")[1].split(")")[0])
                if got and (not wait_line or wait_line in text):
                    self.port = got
                    return
                if self.p.poll() is not None:
                    break
                time.sleep(0.05)
            if self.p.poll() is None:
                fail("%s did not start: see %s" % (self.name, logf))
            time.sleep(0.2)  # the port of a killed server may linger a moment
        fail("%s exited at start: see %s" % (self.name, logf))

    def kill(self, sig=signal.SIGKILL):
        if self.p and self.p.poll() is None:
            self.p.send_signal(sig)
            if sig == signal.SIGKILL:
                self.p.wait()

    def alive(self):
        return self.p is not None and self.p.poll() is None


# ---- soak ---------------------------------------------------------------------------

class Ledger:
    """Acknowledged writes: what must exist."""

    def __init__(self):
        self.lock = threading.Lock()
        self.created = {}   # (kind, name) -> True
        self.deleted = set()
        self.sent = set()      # deletes sent, answered or not
        self.deleting = set()  # gangs whose delete began

    def ack_create(self, kind, name):
        with self.lock:
            self.created[(kind, name)] = True

    def send_delete(self, kind, name):
        """A delete the server may apply although its answer never comes
        (the server killed between its commit and its reply)."""
        with self.lock:
            self.sent.add((kind, name))

    def answer_delete(self, kind, name, status):
        """An answered delete: applied (200, 202) or refused, never both."""
        with self.lock:
            self.sent.discard((kind, name))
            if status in (200, 202):
                self.deleted.add((kind, name))


def writer(api, ledger, wid, stop, gen, deletes=True):
    """Creates gangs in batches of three, deletes the oldest of its own."""
    mine = []
    n = 0
    while not stop.is_set():
        for _ in range(3):
            n += 1
            name = "g%d-w%d-%d" % (gen, wid, n)
            pg, pods = gang_objects(name)
            st, _ = api.call("POST", PG_PATH, pg, timeout=5)
            if st == 0:
                return
            if st == 201:
                ledger.ack_create("PodGroup", name)
            for p in pods:
                st, _ = api.call("POST", POD_PATH, p, timeout=5)
                if st == 0:
                    return
                if st == 201:
                    ledger.ack_create("Pod", p["metadata"]["name"])
            mine.append(name)
        while deletes and len(mine) > 6 and not stop.is_set():
            victim = mine.pop(0)
            with ledger.lock:
                ledger.deleting.add(victim)
            for i in range(GANG):
                pn = "%s-%d" % (victim, i)
                ledger.send_delete("Pod", pn)
                st, _ = api.call("DELETE", "%s/%s?gracePeriodSeconds=0" % (POD_PATH, pn), timeout=5)
                if st == 0:
                    return
                ledger.answer_delete("Pod", pn, st)
            ledger.send_delete("PodGroup", victim)
            st, _ = api.call("DELETE", "%s/%s" % (PG_PATH, victim), timeout=5)
            if st == 0:
                return
            ledger.answer_delete("PodGroup", victim, st)


def verify_ledger(api, ledger, where):
    pods, _ = api.items("/api/v1/pods")
    pgs, _ = api.items("/apis/scheduling.k8s.io/v1alpha3/podgroups")
    nodes, _ = api.items("/api/v1/nodes")
    if pods is None or pgs is None or nodes is None:
        fail("%s: could not list" % where)
    have = {("Pod", p["metadata"]["name"]) for p in pods}
    have |= {("PodGroup", g["metadata"]["name"]) for g in pgs}
    with ledger.lock:
        for key in ledger.created:
            if key not in have and key not in ledger.deleted and key not in ledger.sent:
                fail("%s: acknowledged %s %s lost" % (where, key[0], key[1]))
        deleting = set(ledger.deleting)
    bound = check_cluster(pods, pgs, nodes, deleting, where)
    return len(pods), bound


def soak(binary, work, cycles, mixed_seconds):
    with open(os.path.join(work, "tokens.csv"), "w") as f:
        f.write('%s,admin,1,"system:masters"\n' % TOKEN)
    data = os.path.join(work, "data")
    srv = Proc(binary, work, "soak-server",
               ["--listen", "127.0.0.1:@PORT@", "--data-dir", data,
                "--token-auth-file", os.path.join(work, "tokens.csv")])
    srv.start(0, wait_line="scheduling loop running")
    port = srv.port
    api = Api(port)
    for i in range(12):
        st, _ = api.call("POST", "/api/v1/nodes", node("n%d" % i, "a"))
        if st != 201:
            fail("creating node n%d: %d" % (i, st))
    ledger = Ledger()
    rng = random.Random(int(os.environ.get("SOAK_SEED", "1")))
    total_bound = 0
    for cycle in range(cycles):
        stop = threading.Event()
        ws = [threading.Thread(target=writer, args=(api, ledger, w, stop, cycle))
              for w in range(4)]
        for t in ws:
            t.start()
        time.sleep(rng.uniform(0.3, 1.5))
        srv.kill()
        stop.set()
        for t in ws:
            t.join()
        srv.start(port, wait_line="scheduling loop running")
        npods, bound = verify_ledger(api, ledger, "after kill -9 #%d" % (cycle + 1))
        total_bound = bound
        if (cycle + 1) % 10 == 0 or cycle + 1 == cycles:
            log("kill -9 cycle %d: %d acknowledged creates, %d pods, %d bound, nothing lost"
                % (cycle + 1, len(ledger.created), npods, bound))
    if not ledger.created or total_bound == 0:
        fail("the load wrote or bound nothing")
    mixed(api, srv, ledger, mixed_seconds)
    srv.kill(signal.SIGTERM)
    if srv.p.wait(timeout=60) != 0:
        fail("podkerneld exited %d after SIGTERM" % srv.p.returncode)


def reader(api, stop, rng):
    while not stop.is_set():
        what = rng.randrange(4)
        if what == 0:
            api.call("GET", "/api/v1/pods?limit=500")
        elif what == 1:
            api.call("GET", "/api/v1/nodes/n%d" % rng.randrange(12))
        elif what == 2:
            api.call("PATCH", "/api/v1/nodes/n%d" % rng.randrange(12),
                     {"metadata": {"annotations": {"campaign/touch": str(rng.random())}}},
                     ctype="application/merge-patch+json")
        else:
            c = http.client.HTTPConnection("127.0.0.1", api.port, timeout=3)
            try:
                c.request("GET", "/api/v1/pods?watch=1&timeoutSeconds=2",
                          headers={"Authorization": "Bearer " + TOKEN})
                r = c.getresponse()
                r.read(65536)
            except (OSError, http.client.HTTPException):
                pass
            finally:
                c.close()


def mixed(api, srv, ledger, seconds):
    if seconds <= 0:
        return
    stop = threading.Event()
    rng = random.Random(2)
    ts = [threading.Thread(target=writer, args=(api, ledger, w, stop, 10000)) for w in range(2)]
    ts += [threading.Thread(target=reader, args=(api, stop, random.Random(i))) for i in range(2)]
    for t in ts:
        t.start()
    samples = []
    t0 = time.time()
    while time.time() - t0 < seconds:
        time.sleep(0.5)
        if not srv.alive():
            fail("podkerneld died under mixed load")
        samples.append(rss_mb(srv.p.pid))
    stop.set()
    for t in ts:
        t.join()
    third = max(1, len(samples) // 3)
    first, last = max(samples[:third]), max(samples[-third:])
    limit = float(os.environ.get("SOAK_GROWTH_MB", "128"))
    npods, _ = verify_ledger(api, ledger, "after mixed load")
    log("mixed load %d s: %d pods, RSS peak %.0f MB in the first third, %.0f MB in the last"
        % (seconds, npods, first, last))
    if last - first > limit:
        fail("RSS grew %.0f MB (> %.0f) under steady mixed load" % (last - first, limit))
    del rng


# ---- chaos --------------------------------------------------------------------------

class Watcher(threading.Thread):
    """Every pod event of the cluster: no pod bound twice or moved, no node
    overcommitted, no foreign pod bound but by the foreign scheduler."""

    def __init__(self, api, foreign_bound):
        super().__init__(daemon=True)
        self.api = api
        self.lock = threading.Lock()
        self.pods = {}      # uid -> pod
        self.first = {}     # uid -> first nodeName seen
        self.foreign_bound = foreign_bound  # uids the campaign bound itself
        self.alloc = {}
        self.stop = threading.Event()
        self.events = 0
        self.last_change = time.time()
        self.history = {}  # pod name -> what the watch saw of it

    def refresh_nodes(self):
        nodes, _ = self.api.items("/api/v1/nodes")
        if nodes:
            with self.lock:
                self.alloc = {n["metadata"]["name"]: float(n["status"]["allocatable"]["cpu"])
                              for n in nodes}

    def see(self, typ, pod):
        uid = pod["metadata"]["uid"]
        name = pod["metadata"]["name"]
        nn = pod.get("spec", {}).get("nodeName")
        with self.lock:
            self.history.setdefault(name, []).append(
                "%.2f %s rv=%s node=%s" % (time.time(), typ,
                                           pod["metadata"].get("resourceVersion"), nn))
            if typ == "DELETED":
                self.pods.pop(uid, None)
                return
            old = self.pods.get(uid)
            if nn and self.first.get(uid) and self.first[uid] != nn:
                fail("pod %s moved from %s to %s (bound twice)" % (name, self.first[uid], nn))
            if nn and uid not in self.first:
                self.first[uid] = nn
                self.last_change = time.time()
                if pod["spec"].get("schedulerName") == "foreign":
                    # the campaign records its binding before it sends it
                    if uid not in self.foreign_bound:
                        fail("foreign pod %s bound to %s by someone else" % (name, nn))
            if old is None or old.get("spec", {}).get("nodeName") != nn:
                self.last_change = time.time()
            self.pods[uid] = pod
            used = {}
            for p in self.pods.values():
                n = p.get("spec", {}).get("nodeName")
                if n and live(p):
                    used[n] = used.get(n, 0) + cpu_of(p)
            for n, u in used.items():
                if n in self.alloc and u > self.alloc[n] + 1e-9:
                    on = sorted(p["metadata"]["name"] for p in self.pods.values()
                                if p.get("spec", {}).get("nodeName") == n and live(p))
                    self.suspects = on
                    fail("node %s holds %.1f CPUs of %.1f (overcommit): %s"
                         % (n, u, self.alloc[n], " ".join(on)))

    def relist(self):
        pods, rv = self.api.items("/api/v1/pods")
        if pods is None:
            return None
        with self.lock:
            seen = {p["metadata"]["uid"] for p in pods}
            for uid in list(self.pods):
                if uid not in seen:
                    self.pods.pop(uid)
        for p in pods:
            self.see("ADDED", p)
        return rv

    def run(self):
        rv = None
        while not self.stop.is_set():
            if rv is None:
                rv = self.relist()
                if rv is None:
                    time.sleep(0.3)
                    continue
            c = http.client.HTTPConnection("127.0.0.1", self.api.port, timeout=5)
            try:
                c.request("GET", "/api/v1/pods?watch=1&allowWatchBookmarks=true&"
                          "timeoutSeconds=30&resourceVersion=%s" % rv,
                          headers={"Authorization": "Bearer " + TOKEN})
                r = c.getresponse()
                if r.status == 410:
                    rv = None
                    continue
                if r.status != 200:
                    time.sleep(0.3)
                    continue
                while not self.stop.is_set():
                    line = r.readline()
                    if not line:
                        break
                    if not line.strip():
                        continue
                    ev = json.loads(line)
                    obj = ev.get("object", {})
                    if ev["type"] == "ERROR":
                        rv = None if obj.get("code") == 410 else rv
                        break
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    if ev["type"] != "BOOKMARK":
                        self.events += 1
                        self.see(ev["type"], obj)
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.2)
            finally:
                c.close()


def chaos(binary, work, seconds):
    with open(os.path.join(work, "tokens.csv"), "w") as f:
        f.write('%s,admin,1,"system:masters"\n' % TOKEN)
    data = os.path.join(work, "cluster")
    cluster = Proc(binary, work, "stand-in",
                   ["--no-scheduling", "--listen", "127.0.0.1:@PORT@", "--data-dir", data,
                    "--token-auth-file", os.path.join(work, "tokens.csv")])
    cluster.start(0)
    port = cluster.port
    api = Api(port)
    with open(os.path.join(work, "kubeconfig"), "w") as f:
        f.write("apiVersion: v1\nkind: Config\n"
                "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:%d'}}]\n"
                "users: [{name: u, user: {token: %s}}]\n"
                "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
                "current-context: c\n" % (port, TOKEN))
    for i in range(8):
        st, _ = api.call("POST", "/api/v1/nodes", node("n%d" % i, "a" if i < 6 else "foreign"))
        if st != 201:
            fail("creating node n%d: %d" % (i, st))
    lease = ["--leader-elect-lease-duration", "2", "--leader-elect-renew-deadline", "1.5",
             "--leader-elect-retry-period", "0.5"]
    scheds = {}
    for name in ("a", "b"):
        scheds[name] = Proc(binary, work, "sched-" + name,
                            ["--kubeconfig", os.path.join(work, "kubeconfig"),
                             "--listen", "127.0.0.1:0", "--leader-elect",
                             "--leader-elect-identity", "sched-" + name, "-v", "2"] + lease,
                            port_pattern="serving health on")
        scheds[name].start()
    foreign_bound = set()
    w = Watcher(api, foreign_bound)
    w.suspects = []
    actions = []

    def diagnose():
        time.sleep(1)  # the schedulers log a binding after its answer
        print("--- the watch saw (at %.2f):" % t0, file=sys.stderr)
        for x in w.suspects:
            for h in w.history.get(x, []):
                print("  %s %s" % (x, h), file=sys.stderr)
        print("--- actions (seconds from the start)", file=sys.stderr)
        for line in actions[-25:]:
            print(line, file=sys.stderr)
        for s in scheds.values():
            with open(os.path.join(work, s.name + ".log")) as f:
                lines = f.read().splitlines()
            print("--- %s: bindings of %s, lease changes" % (s.name, " ".join(w.suspects)),
                  file=sys.stderr)
            for line in lines:
                if any(("pod default/%s " % x) in line for x in w.suspects) or \
                        "leading" in line or "standby" in line or "--- " in line:
                    print(line, file=sys.stderr)

    DIAGNOSE.append(diagnose)
    w.refresh_nodes()
    w.start()
    rng = random.Random(int(os.environ.get("CHAOS_SEED", "1")))
    t0 = time.time()
    gangs, deleting, foreign = [], set(), []
    counts = {}
    n_gang = n_foreign = 0

    def leader():
        st, b = api.call("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"
                         "podkernel-scheduler", timeout=3)
        if st != 200:
            return None
        h = b.get("spec", {}).get("holderIdentity", "")
        return h[len("sched-"):] if h.startswith("sched-") and h[6:] in scheds else None

    def act(what):
        counts[what] = counts.get(what, 0) + 1
        actions.append("%6.1f %s" % (time.time() - t0, what))
        for s in scheds.values():  # the schedulers' logs get the same marks
            with open(os.path.join(work, s.name + ".log"), "a") as f:
                f.write("--- campaign: %6.1f %s\n" % (time.time() - t0, what))

    def churn():
        nonlocal n_gang
        for _ in range(rng.randrange(1, 4)):
            n_gang += 1
            name = "c%d" % n_gang
            pg, pods = gang_objects(name, selector={"pool": "a"})
            api.call("POST", PG_PATH, pg)
            for p in pods:
                api.call("POST", POD_PATH, p)
            gangs.append(name)
        while len(gangs) > 8:
            victim = gangs.pop(rng.randrange(len(gangs)))
            deleting.add(victim)
            for i in range(GANG):
                api.call("DELETE", "%s/%s-%d?gracePeriodSeconds=0" % (POD_PATH, victim, i))
            api.call("DELETE", "%s/%s" % (PG_PATH, victim))
        act("churn")

    def foreign_step():
        nonlocal n_foreign
        n_foreign += 1
        name = "f%d" % n_foreign
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"schedulerName": "foreign",
                        "containers": [{"name": "c", "image": "x",
                                        "resources": {"requests": {"cpu": "1"}}}]}}
        st, b = api.call("POST", POD_PATH, pod)
        if st == 201:
            target = "n%d" % rng.choice((6, 7))
            with w.lock:
                used = sum(cpu_of(p) for p in w.pods.values()
                           if p.get("spec", {}).get("nodeName") == target and live(p))
            if used + 1 <= NODE_CPU:
                foreign_bound.add(b["metadata"]["uid"])
                st, _ = api.call("POST", "%s/%s/binding" % (POD_PATH, name),
                                 {"apiVersion": "v1", "kind": "Binding",
                                  "metadata": {"name": name},
                                  "target": {"apiVersion": "v1", "kind": "Node", "name": target}})
                if st == 409:
                    fail("binding foreign pod %s: 409, someone else bound it" % name)
            foreign.append(name)
        while len(foreign) > 6:  # at most 6 CPUs: a foreign node cannot fill
            api.call("DELETE", "%s/%s?gracePeriodSeconds=0" % (POD_PATH, foreign.pop(0)))
        act("foreign")

    while time.time() - t0 < seconds:
        r = rng.random()
        L = leader()
        if r < 0.15 and L:
            scheds[L].kill()
            act("kill -9 leader")
            time.sleep(rng.uniform(0.2, 1.0))
            scheds[L].start()
        elif r < 0.27 and L:
            scheds[L].kill(signal.SIGSTOP)
            act("SIGSTOP leader")
            time.sleep(3)  # past the 2 s lease: the other takes over
            scheds[L].kill(signal.SIGCONT)
        elif r < 0.37:
            cluster.kill()
            act("kill -9 stand-in")
            time.sleep(rng.uniform(0.2, 1.0))
            cluster.start(port)
        elif r < 0.8:
            churn()
        else:
            foreign_step()
        time.sleep(rng.uniform(0.2, 1.0))
        for s in scheds.values():
            if not s.alive():
                fail("a scheduler died: see %s/%s.log" % (work, s.name))
    settle(api, w, deleting, work)
    w.stop.set()
    log("chaos %d s: %s; %d pod events watched, no pod bound twice or moved, no overcommit,"
        " no partial gang" % (seconds, ", ".join("%s %d" % kv for kv in sorted(counts.items())),
                               w.events))
    for s in scheds.values():
        s.kill(signal.SIGTERM)
        if s.p.wait(timeout=60) != 0:
            fail("%s exited %d after SIGTERM" % (s.name, s.p.returncode))
    cluster.kill(signal.SIGTERM)
    cluster.p.wait(timeout=60)


def settle(api, w, deleting, work):
    """Calm: no binding for 5 s (at most 60 s); then every gang is whole or unbound,
    and a gang left unbound must not fit."""
    t = time.time()
    while time.time() - t < 60:
        if time.time() - w.last_change > 5:
            break
        time.sleep(0.5)
    pods, _ = api.items("/api/v1/pods")
    pgs, _ = api.items("/apis/scheduling.k8s.io/v1alpha3/podgroups")
    nodes, _ = api.items("/api/v1/nodes")
    if pods is None or pgs is None or nodes is None:
        fail("could not list the calm cluster")
    if check_cluster(pods, pgs, nodes, deleting, "calm") == 0:
        fail("nothing was bound: the campaign tested nothing (see %s)" % work)
    free = {n["metadata"]["name"]: float(n["status"]["allocatable"]["cpu"]) for n in nodes
            if n["metadata"]["labels"].get("pool") == "a"}
    for p in pods:
        nn = p.get("spec", {}).get("nodeName")
        if nn in free and live(p):
            free[nn] -= cpu_of(p)
    slots = sum(int(f // POD_CPU) for f in free.values())
    if slots >= GANG and pending_gang(pods, pgs, deleting):
        # a gang that fits is bound, after the scheduler's backoff at the latest
        for _ in range(60):
            time.sleep(0.5)
            pods, _ = api.items("/api/v1/pods")
            if pods is not None and not pending_gang(pods, pgs, deleting):
                break
        else:
            fail("gang %s is pending though %d pod slots are free (see %s)"
                 % (pending_gang(pods, pgs, deleting), slots, work))
        check_cluster(pods, pgs, nodes, deleting, "calm")


def pending_gang(pods, pgs, deleting):
    """A whole gang (all its pods exist) with no pod bound, or None."""
    for pg in pgs:
        g = pg["metadata"]["name"]
        if g in deleting:
            continue
        mine = [p for p in pods
                if p["spec"].get("schedulingGroup", {}).get("podGroupName") == g]
        if len(mine) == GANG and not any(p["spec"].get("nodeName") for p in mine):
            return g
    return None


def main():
    mode, binary, work = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "soak":
        soak(binary, work, int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "chaos":
        chaos(binary, work, int(sys.argv[4]))
    else:
        fail("unknown campaign " + mode)


if __name__ == "__main__":
    main()
