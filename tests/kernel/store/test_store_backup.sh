#!/bin/sh
# Store operations: the schema version, an online backup and a restore.
#   - a new store is written at the current schema (PRAGMA user_version);
#   - podctl store backup copies it while podkerneld serves and writes;
#   - podctl store restore is refused while podkerneld holds the directory,
#     and so is a second podkerneld on it;
#   - stopped, the restore brings back exactly the objects of the backup
#     (the replaced store kept aside), and podkerneld serves them;
#   - a store of a newer schema is refused with both versions named, a
#     store from before versions (0, no checksum column) is migrated.
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
need_python
e2e_setup
e2e_start_server --no-scheduling
A="Authorization: Bearer $PODKERNEL_TOKEN"
DB="$WORK/data/podkernel.db"
cm() { # cm NAME: a pod (no scheduling: it stays as written)
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec: {containers: [{name: c, image: busybox}]}\n' "$1" >"$WORK/$1.yaml"
	podctl apply -f "$WORK/$1.yaml" >/dev/null || fail "apply $1"
}
names() {
	curl -s -H "$A" "$PODKERNEL_SERVER/api/v1/namespaces/default/pods" |
		python3 -c 'import json,sys; print(" ".join(sorted(i["metadata"]["name"] for i in json.load(sys.stdin)["items"])))'
}
v=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$DB")
[ "$v" = 4 ] || fail "a new store has schema version $v, want 4"

cm before-1
cm before-2
# writes go on during the backup: it is one commit's store all the same
( for i in 1 2 3 4 5 6 7 8; do cm "during-$i"; done ) &
writer=$!
podctl store backup --data-dir "$WORK/data" "$WORK/backup.db" >"$WORK/backup.out" ||
	{ cat "$WORK/backup.out"; fail "store backup"; }
wait "$writer"
grep -q "^$WORK/backup.db: [0-9]* objects at resourceVersion [0-9]* (schema 4)$" "$WORK/backup.out" ||
	{ cat "$WORK/backup.out"; fail "store backup summary"; }
[ ! -e "$WORK/backup.db.partial" ] || fail "store backup left its partial file"
"$BIN/podctl" store check "$WORK/backup.db" >/dev/null || fail "the backup does not check"
saved=$(python3 -c 'import sqlite3,sys; print(" ".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT name FROM objects WHERE kind=\"Pod\" AND ns=\"default\" ORDER BY name")))' "$WORK/backup.db")
case "$saved" in *before-1\ before-2*) ;; *) fail "the backup lacks the objects before it: $saved" ;; esac
cm after

set +e
"$BIN/podctl" store restore --data-dir "$WORK/data" "$WORK/backup.db" >"$WORK/busy" 2>&1
rc=$?
"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data" --no-scheduling >"$WORK/second" 2>&1
rc2=$?
set -e
[ $rc = 1 ] && grep -q "in use by a running podkerneld: stop it first" "$WORK/busy" ||
	{ cat "$WORK/busy"; fail "restore under a running podkerneld: exit $rc"; }
[ $rc2 = 1 ] && grep -q "in use by a running podkerneld" "$WORK/second" ||
	{ cat "$WORK/second"; fail "a second podkerneld on the directory: exit $rc2"; }

kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "podkerneld exit status $?"
podctl store restore --data-dir "$WORK/data" "$WORK/backup.db" >"$WORK/restore.out" ||
	{ cat "$WORK/restore.out"; fail "store restore"; }
[ -s "$DB.pre-restore" ] || fail "the replaced store was not kept"
e2e_start_server --no-scheduling
[ "$(names)" = "$saved" ] || fail "after restore: $(names), want $saved"

# A newer schema is refused before anything is written; version 0 is migrated.
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "podkerneld exit status $?"
cp "$DB" "$WORK/v0.db"
python3 -c 'import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute("PRAGMA user_version=7"); d.commit()' "$DB"
set +e
"$BIN/podkerneld" --listen 127.0.0.1:0 --data-dir "$WORK/data" --no-scheduling >"$WORK/newer" 2>&1
rc=$?
"$BIN/podctl" store backup --data-dir "$WORK/data" "$WORK/newer.db" >"$WORK/newer-backup" 2>&1
rc2=$?
set -e
[ $rc = 1 ] && grep -q "store schema version 7 is newer than this podkernel (.*) understands (4)" "$WORK/newer" ||
	{ cat "$WORK/newer"; fail "a newer store: exit $rc"; }
[ $rc2 = 1 ] && grep -q "schema version 7 is newer" "$WORK/newer-backup" ||
	{ cat "$WORK/newer-backup"; fail "backup of a newer store: exit $rc2"; }
python3 - "$WORK/v0.db" <<'PY'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
d.executescript("""
CREATE TABLE o2(kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, rv INTEGER NOT NULL,
  body TEXT NOT NULL, PRIMARY KEY(kind, ns, name)) WITHOUT ROWID;
INSERT INTO o2 SELECT kind, ns, name, rv, body FROM objects;
DROP TABLE objects; ALTER TABLE o2 RENAME TO objects;
DROP TABLE IF EXISTS damaged_objects; PRAGMA user_version=0;
DROP TABLE IF EXISTS event_expiry;
INSERT INTO objects VALUES('Event', 'default', 'old-ev', 1, '{"apiVersion":"v1","kind":"Event",'
  || '"metadata":{"name":"old-ev","namespace":"default","resourceVersion":"1",'
  || '"creationTimestamp":"2020-01-01T00:00:00Z","uid":"u-old-ev"},"involvedObject":{"kind":"Pod",'
  || '"name":"p","namespace":"default"},"reason":"Scheduled","message":"m","type":"Normal"}');""")
d.commit()
PY
cp "$WORK/v0.db" "$DB"
rm -f "$DB-wal" "$DB-shm"
e2e_start_server --no-scheduling
[ "$(names)" = "$saved" ] || fail "after migrating version 0: $(names), want $saved"
v=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$DB")
[ "$v" = 4 ] || fail "the migrated store has schema version $v, want 4"
# the Event of a file from before the expiry index is indexed from its creation
at=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT at FROM event_expiry WHERE ns=\"default\" AND name=\"old-ev\"").fetchone())' "$DB")
[ "$at" = "(1577836800,)" ] || fail "the migrated Event's expiry: $at, want (1577836800,)"
echo "test_store_backup: ok"
