#!/bin/sh
# Each library's link list in the Makefile (LIBS_<name>) says what it uses:
# every folder whose headers a library's sources include is one of its
# libraries, and the boundaries the tree keeps hold: the store does not link
# the workload builder (its admission rules are given at open), the
# appliance does not link the API server nor the placement map (the map
# registers on the loop as hooks; it answers /ui/ without the server), attach
# links no store (nor the API server, the controllers or the simulator), the
# write path depends on the object model only (its backends live with the
# store and attach), standalone's controllers write through it (not on the
# store), and podctl's and podagent's libraries link the one Kubernetes
# client (kernel/kube).
set -u
SRC="${PODKERNEL_SRC:-.}"
cd "$SRC" || exit 1
fail=0

# name folder pairs of LIBDEFS (name:folder[:excluded]).
defs=$(sed -n '/^LIBDEFS :=/,/^$/p' Makefile | tr -d '\\' | tr ' \t' '\n\n' |
	grep ':' | grep -v ':=' | awk -F: '{print $1, $2}')
[ -n "$defs" ] || { echo "FAIL: no LIBDEFS in the Makefile"; exit 1; }

libs_of() { # the LIBS_<name> list, continuation lines included
	awk -v n="LIBS_$1" '$1 == n && $2 == ":=" { on = 1; $1 = ""; $2 = "" }
		on { more = /\\$/; sub(/\\$/, ""); print; if (!more) exit }' Makefile
}
lib_of_folder() { echo "$defs" | awk -v d="$1" '$2 == d {print $1}'; }

echo "$defs" | while read -r name dir; do
	list=" $(libs_of "$name" | tr '\n\t' '  ') "
	[ "$list" != "  " ] || { echo "FAIL: no LIBS_$name"; echo x >>"$SRC/.links-fail.$$"; continue; }
	for inc in $(grep -ho '^#include "[a-z_/]*/[a-z_.-]*\.h"' "$dir"/*.c "$dir"/*.h 2>/dev/null |
		sed 's/#include "//; s|/[^/]*\.h"$||' | sort -u); do
		[ "$inc" = "$dir" ] && continue
		used=$(lib_of_folder "$inc")
		[ -n "$used" ] || continue # generated or test-only headers
		case "$list" in
		*" $used "*) ;;
		*)
			echo "FAIL: $dir includes $inc/ but LIBS_$name does not list $used"
			echo x >>"$SRC/.links-fail.$$"
			;;
		esac
	done
done
[ -f "$SRC/.links-fail.$$" ] && { rm -f "$SRC/.links-fail.$$"; fail=1; }

# The boundaries.
never() { # never LIB OTHER WHY
	case " $(libs_of "$1" | tr '\n\t' '  ') " in
	*" $2 "*) echo "FAIL: LIBS_$1 lists $2 ($3)"; fail=1 ;;
	esac
}
always() {
	case " $(libs_of "$1" | tr '\n\t' '  ') " in
	*" $2 "*) ;;
	*) echo "FAIL: LIBS_$1 does not list $2 ($3)"; fail=1 ;;
	esac
}
never pkstore pkbuilder "admission rules are given when the store opens"
never pkappliance pkserver "the loop does not serve HTTP"
never pkappliance pkui "the placement map registers on the loop as hooks"
never pkui pkserver "the placement map answers /ui/ without the server"
never pkhttp pkstore "the listener serves HTTP, not the store"
for lib in pkstore pkserver pkcontrollers pksim; do
	never pkattach "$lib" "attach links no store (its health port is the listener; the queue pass is handed to it)"
done
for lib in pkstore pkappliance pkattach pkserver pksched; do
	never pkwrite "$lib" "the write path depends on the object model only"
done
always pkclient pkkube "podctl talks through the one Kubernetes client"
always pkagent pkkube "podagent publishes through the one Kubernetes client"
if grep -q '^#include "kernel/builder/' kernel/store/*.c kernel/store/*.h; then
	echo "FAIL: kernel/store includes the builder"
	fail=1
fi
# Standalone's controllers write through the write path only; Events (the
# record of what it wrote, recorder.c) are the one store write beside it.
# queues_scratch.c fills a scratch store of its own (attach mode's queue pass
# on a copy of the cluster), never standalone's.
writes=$(grep -n 'pk_store_\(create\|update\|patch\|delete\|edit_batch\)' \
	$(ls kernel/controllers/*.c | grep -v '/\(recorder\|queues_scratch\)\.c$') 2>/dev/null)
if [ -n "$writes" ]; then
	echo "FAIL: kernel/controllers writes the store beside the write path:"
	echo "$writes"
	fail=1
fi
[ "$fail" = 0 ] && echo "test_library_links: every included folder is linked; the boundaries hold"
exit $fail
