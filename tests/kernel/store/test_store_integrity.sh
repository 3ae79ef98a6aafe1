#!/bin/sh
# Damage on disk is found, said and never served silently.  A real store
# (podkerneld's SQLite file, 120 pods) gets bytes flipped inside its data
# pages (bodies: SQLite's own checks pass), one row whose resourceVersion
# is -5 with a checksum that matches, and two rows whose keys are damaged
# (one now spells an intact row's key, one is out of the b-tree's order:
# neither can be deleted by its key).  Then:
#   - podctl store check names every damaged row and exits 1;
#   - podkerneld refuses to start on it (exit 1, the rows named);
#   - with --allow-damaged-store it starts, logs the rows it set aside,
#     /readyz fails with the store-integrity detail, /metrics counts them,
#     and the list serves the intact pods only (never -5 as a huge number);
#   - podctl store check then finds the store intact (rows set aside counted).
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
e2e_setup
e2e_start_server --no-scheduling
A="Authorization: Bearer $PODKERNEL_TOKEN"
python3 - "$WORK/pods.json" <<'PY'
import json, sys
items = [{"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "p%03d" % i, "namespace": "default",
                       "annotations": {"note": "intact-%03d-" % i + "abcdefgh" * 8}},
          "spec": {"containers": [{"name": "c", "image": "busybox"}]}} for i in range(120)]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[1], "w"))
PY
podctl apply -f "$WORK/pods.json" >/dev/null || fail "apply 120 pods"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "podkerneld exit status $?"
DB="$WORK/data/podkernel.db"
[ ! -s "$DB-wal" ] || fail "the WAL was not checkpointed at exit"

# Flip one byte inside the bodies of 12 pods, in the file's data pages, and
# give p115 a resourceVersion of -5 with a checksum that matches.
python3 - "$DB" <<'PY'
import sqlite3, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
for i in range(0, 120, 10):
    at = data.find(b"intact-%03d-" % i)
    assert at > 0, i
    data[at + 20] ^= 0x01  # inside the annotation's value: still valid JSON
open(path, "wb").write(data)
def fnv(h, b):
    for c in b:
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h
db = sqlite3.connect(path)
kind, ns, name, body = db.execute(
    "SELECT kind, ns, name, body FROM objects WHERE name='p115'").fetchone()
body = body.replace('"resourceVersion":"', '"resourceVersion":"-5"', 1)
body = body[:body.index('"-5"') + 4] + body[body.index('"', body.index('"-5"') + 4) + 1:]
h = 14695981039346656037
for f in (kind, ns, name, "-5"):
    h = fnv(fnv(h, f.encode()), b"\0")
h = fnv(h, body.encode())
if h >= 1 << 63:
    h -= 1 << 64
db.execute("UPDATE objects SET rv=-5, body=?, sum=? WHERE name='p115'", (body, h))
db.commit()
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
db.close()
# Two keys themselves: p025 now spells p024 (an intact row's key) and p035
# p0s5 (out of the b-tree's order); neither can be found by its key.
data = bytearray(open(path, "rb").read())
for name, at_char, bit in ((b"p025", 3, 0x01), (b"p035", 2, 0x40)):
    at = data.find(b"Poddefault" + name)
    assert at > 0, name
    data[at + 10 + at_char] ^= bit
open(path, "wb").write(data)
PY

set +e
"$BIN/podctl" store check "$DB" >"$WORK/check" 2>&1
rc=$?
set -e
[ $rc = 1 ] || { cat "$WORK/check"; fail "store check of a damaged store: exit $rc, want 1"; }
[ "$(grep -c '^Pod default/p[0-9s]*: checksum mismatch$' "$WORK/check")" = 14 ] ||
	{ cat "$WORK/check"; fail "store check did not name the 14 flipped rows"; }
grep -q '^Pod default/p115: resourceVersion -5 outside 1\.\.[0-9]*$' "$WORK/check" ||
	{ cat "$WORK/check"; fail "store check did not refuse resourceVersion -5"; }
grep -q "1[0-9][0-9] objects, 15 damaged" "$WORK/check" ||
	{ cat "$WORK/check"; fail "store check summary"; }

# Without the flag: refused, naming the damage.
set +e
"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data" \
	--token-auth-file "$WORK/tokens.csv" --no-scheduling >"$WORK/refused.log" 2>&1
rc=$?
set -e
[ $rc = 1 ] || { cat "$WORK/refused.log"; fail "podkerneld on a damaged store: exit $rc, want 1"; }
grep -q "15 damaged rows" "$WORK/refused.log" && grep -q "allow-damaged-store" "$WORK/refused.log" ||
	{ cat "$WORK/refused.log"; fail "the refusal does not name the damage"; }

# With it: served, reported everywhere.
e2e_start_server --no-scheduling --allow-damaged-store
grep -q "store: 15 damaged rows set aside" "$WORK/podkerneld.log" ||
	{ cat "$WORK/podkerneld.log"; fail "no log line for the rows set aside"; }
# the table rebuilt without them keeps the Event expiry index's triggers
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sqlite_master WHERE type=\"trigger\" AND name LIKE \"event_expiry_%\"").fetchone()[0])' "$DB")
[ "$n" = 3 ] || fail "the Event expiry triggers after setting rows aside: $n, want 3"
# ... and the owner index's (a reference written after the restart is indexed)
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sqlite_master WHERE type=\"trigger\" AND name LIKE \"owner_refs_%\"").fetchone()[0])' "$DB")
[ "$n" = 3 ] || fail "the owner index triggers after setting rows aside: $n, want 3"
[ "$(grep -c 'store: damaged row Pod default/p' "$WORK/podkerneld.log")" = 15 ] ||
	fail "each damaged row is not logged"
code=$(curl -s -o "$WORK/ready" -w '%{http_code}' "$PODKERNEL_SERVER/readyz")
[ "$code" = 500 ] && grep -q "store-integrity failed: 15 damaged rows" "$WORK/ready" ||
	{ cat "$WORK/ready"; fail "/readyz $code without the damage"; }
curl -s -H "$A" "$PODKERNEL_SERVER/metrics" | grep -qx "podkernel_store_damaged_rows 15" ||
	fail "no podkernel_store_damaged_rows 15"
curl -s -H "$A" "$PODKERNEL_SERVER/api/v1/namespaces/default/pods" >"$WORK/list"
python3 - "$WORK/list" <<'PY' || fail "the list after setting the damage aside"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
names = {p["metadata"]["name"] for p in items}
assert len(items) == 105, len(items)
assert "p115" not in names and "p010" not in names and "p011" in names
assert "p025" not in names and "p035" not in names and "p024" in names
for p in items:
    rv = int(p["metadata"]["resourceVersion"])
    assert 0 < rv < 1 << 40, rv
PY
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "podkerneld exit status $?"
"$BIN/podctl" store check "$DB" >"$WORK/check" 2>&1 || { cat "$WORK/check"; fail "store check after"; }
grep -q "0 damaged, 15 set aside earlier" "$WORK/check" || { cat "$WORK/check"; fail "summary after"; }
set +e
"$BIN/podctl" store check "$WORK/pods.json" >/dev/null 2>&1
rc=$?
set -e
[ $rc = 2 ] || fail "store check of a file that is no store: exit $rc, want 2"
echo "test_store_integrity: ok"
