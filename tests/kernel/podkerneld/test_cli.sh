#!/bin/sh
# podkerneld's start-up errors say what is wrong before anything is served:
# a missing or invalid --simulate-board is exit 2 naming the file (and the
# line and column), with no "serving on" line before it; a busy port is
# exit 1 naming the address; --no-scheduling registers a board's Nodes and
# refuses the simulated lifecycle; --queues only attached, and
# --queue-controller-user only with --no-scheduling.
set -eu
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/podkernel-pkd-cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
PKD="$PODKERNEL_BIN/podkerneld"

rc=0
timeout 30 "$PKD" --listen 127.0.0.1:0 --data-dir "$WORK/d1" --simulate-board "$WORK/nosuch.yaml" \
	> "$WORK/out" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/out"; fail "a missing board: exit $rc, expected 2"; }
grep -q "nosuch.yaml" "$WORK/out" || fail "the error does not name the board file"
grep -q "serving on" "$WORK/out" && fail "served before reading the board"

printf 'apiVersion: podkernel.dev/v1\nkind: Board\nmetadata: {name: x}\nspec: {hosts: nope}\n' > "$WORK/bad.yaml"
rc=0
timeout 30 "$PKD" --listen 127.0.0.1:0 --data-dir "$WORK/d2" --simulate-board "$WORK/bad.yaml" \
	> "$WORK/out" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/out"; fail "an invalid board: exit $rc, expected 2"; }
grep -q "bad.yaml:[0-9]*:[0-9]*:" "$WORK/out" || { cat "$WORK/out"; fail "no FILE:LINE:COL"; }
grep -q "serving on" "$WORK/out" && fail "served before reading the board"

# a port another process holds
python3 - "$PKD" "$WORK" <<'PY' || exit 1
import socket, subprocess, sys
pkd, work = sys.argv[1:3]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
port = s.getsockname()[1]
r = subprocess.run([pkd, "--listen", "127.0.0.1:%d" % port, "--data-dir", work + "/d3"],
                   capture_output=True, text=True, timeout=30)
if r.returncode != 1 or ("127.0.0.1:%d" % port) not in r.stderr or "port 0" in r.stderr:
    print("FAIL: busy port: exit %d: %s" % (r.returncode, r.stderr), file=sys.stderr)
    sys.exit(1)
PY
# --no-scheduling --simulate-board: the board's Nodes are served all the same
# (a cluster for another scheduler); the --sim-* lifecycle is refused with it.
"$PKD" --listen 127.0.0.1:0 --data-dir "$WORK/d4" --no-scheduling \
	--simulate-board "$PODKERNEL_SRC/boards/tpu-cube.yaml" > "$WORK/out" 2>&1 &
pid=$!
port=""
for _ in $(seq 100); do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$WORK/out" | head -1)
	[ -n "$port" ] && grep -q "registered the" "$WORK/out" && break
	sleep 0.1
done
[ -n "$port" ] || { kill "$pid"; cat "$WORK/out"; fail "--no-scheduling --simulate-board did not serve"; }
n=$(curl -s "http://127.0.0.1:$port/api/v1/nodes" | grep -o '"podkernel.dev/simulated"' | wc -l)
kill -TERM "$pid"
wait "$pid" || { cat "$WORK/out"; fail "podkerneld --no-scheduling exited non-zero"; }
[ "$n" -gt 0 ] || { cat "$WORK/out"; fail "--no-scheduling ignored --simulate-board (no Nodes)"; }
rc=0
timeout 30 "$PKD" --listen 127.0.0.1:0 --data-dir "$WORK/d5" --no-scheduling --sim-lifecycle \
	> "$WORK/out" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$WORK/out"; fail "--no-scheduling --sim-lifecycle: exit $rc, expected 2"; }
grep -q "do not go with --no-scheduling" "$WORK/out" || { cat "$WORK/out"; fail "no reason given"; }


# The configuration file: refused by field path before anything is served.
cfg() { # cfg BODY...: a PodkerneldConfiguration with these lines
	printf 'apiVersion: podkernel.io/v1alpha1\nkind: PodkerneldConfiguration\n' >"$WORK/c.yaml"
	printf '%s\n' "$@" >>"$WORK/c.yaml"
}
refused() { # refused WHAT TEXT: podkerneld --config exits 2 saying TEXT
	rc=0
	timeout 30 "$PKD" --config "$WORK/c.yaml" --data-dir "$WORK/d7" >"$WORK/out" 2>&1 || rc=$?
	[ "$rc" = 2 ] && grep -qF -e "$2" "$WORK/out" || { cat "$WORK/out"; fail "$1: exit $rc"; }
	grep -q "serving on" "$WORK/out" && fail "$1: served"
	return 0
}
cfg 'logging: {format: json, colour: true}'
refused "an unknown field" "c.yaml: logging.colour: unknown field"
cfg 'listen: 6443'
refused "a number for a string" "c.yaml: listen: expected a string"
cfg 'strategy: nosuch'
refused "an unknown strategy" "--strategy nosuch: expected one of"
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n' >"$WORK/c.yaml"
refused "another kind" 'c.yaml: apiVersion: expected "podkernel.io/v1alpha1"'
rm -f "$WORK/c.yaml"
refused "a missing file" "c.yaml: No such file or directory"

# A flag overrides the file: the file's format and address, the flag's address.
python3 - "$PKD" "$WORK" <<'PY' || exit 1
import json, socket, subprocess, sys
pkd, work = sys.argv[1:3]
held = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    held.append(s)
p1, p2 = (s.getsockname()[1] for s in held)
open(work + "/c.yaml", "w").write(
    "apiVersion: podkernel.io/v1alpha1\nkind: PodkerneldConfiguration\n"
    "listen: 127.0.0.1:%d\nlogging:\n  format: json\nstrategy: kep\n" % p1)
r = subprocess.run([pkd, "--config", work + "/c.yaml", "--listen", "127.0.0.1:%d" % p2,
                    "--data-dir", work + "/d6"], capture_output=True, text=True, timeout=30)
lines = [json.loads(l) for l in r.stderr.splitlines() if l.startswith("{")]
if r.returncode != 1 or not any(("127.0.0.1:%d" % p2) in l["msg"] for l in lines) or \
        ("127.0.0.1:%d" % p1) in r.stderr or any(l["level"] != "error" for l in lines
                                                if "127.0.0.1" in l["msg"]):
    print("FAIL: flags over the file: exit %d: %s" % (r.returncode, r.stderr), file=sys.stderr)
    sys.exit(1)
PY
# Who admits queued workloads: --queues is attach mode's, podkernel or cluster;
# --queue-controller-user is the stand-in cluster's (--no-scheduling).
flag_refused() { # flag_refused TEXT ARGS...: exit 2 saying TEXT
	want=$1
	shift
	rc=0
	timeout 30 "$PKD" --listen 127.0.0.1:0 --data-dir "$WORK/dq" "$@" > "$WORK/out" 2>&1 || rc=$?
	[ "$rc" = 2 ] || { cat "$WORK/out"; fail "$*: exit $rc, expected 2"; }
	grep -q -- "$want" "$WORK/out" || { cat "$WORK/out"; fail "$*: does not say $want"; }
}
printf 'apiVersion: v1\nkind: Config\n' > "$WORK/kc"
flag_refused "--queues needs --kubeconfig or --in-cluster" --queues podkernel
flag_refused "--queues kueue: expected podkernel or cluster" --kubeconfig "$WORK/kc" --queues kueue
flag_refused "--queue-controller-user needs --no-scheduling" --queue-controller-user sched
echo "test_cli (podkerneld): bad boards and busy ports are named before serving; the configuration file"
