#!/bin/sh
# Capacity as the kubelet reports it: memory is /proc/meminfo's MemTotal (not
# hwloc's NUMA sum), and cpu counts every CPU of the machine, also when the
# agent runs inside a cpuset that allows fewer (as in a container).
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
AGENT=$PODKERNEL_BIN/podagent
. "$PODKERNEL_SRC/tests/need.sh"
need_tool python3 nproc
tmp=$(mktemp -d) || exit 1
cg=
cleanup() {
	[ -n "$cg" ] && { echo $$ > "$(dirname "$cg")/cgroup.procs"; rmdir "$cg"; } 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
cap() { # cap FIELD: the capacity field of this machine's Node
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"]["capacity"][sys.argv[2]])' \
		"$tmp/node.json" "$1"
}
"$AGENT" --once --no-udev --no-netlink -o json > "$tmp/node.json" 2>"$tmp/err" ||
	{ echo "podagent failed"; cat "$tmp/err"; exit 1; }
mem=$(awk '/^MemTotal:/ { print $2 "Ki" }' /proc/meminfo)
[ "$(cap memory)" = "$mem" ] || { echo "memory $(cap memory), MemTotal is $mem"; fail=1; }
all=$(nproc --all)
[ "$(cap cpu)" = "$all" ] || { echo "cpu $(cap cpu), the machine has $all"; fail=1; }

# Inside a cpuset of one CPU the whole machine still counts.
set_dir=""
for d in /sys/fs/cgroup/cpuset /sys/fs/cgroup; do
	[ -f "$d/cpuset.cpus" ] || [ -f "$d/cgroup.subtree_control" ] && { set_dir=$d; break; }
done
if [ "$all" -lt 2 ]; then
	echo "SKIP: one CPU: no smaller cpuset to run in (memory and cpu were checked)"; exit 77
fi
if [ "$(id -u)" != 0 ] || [ -z "$set_dir" ] || ! mkdir "$set_dir/podkernel-cap-$$" 2>/dev/null; then
	echo "SKIP: cannot create a cpuset cgroup here (needs root and a cpuset controller)"; exit 77
fi
cg="$set_dir/podkernel-cap-$$"
if [ -f "$cg/cpuset.mems" ]; then # cgroup v1
	cat "$set_dir/cpuset.mems" > "$cg/cpuset.mems"
	echo 0 > "$cg/cpuset.cpus"
else # cgroup v2: the controller must be enabled for children
	grep -qw cpuset "$set_dir/cgroup.subtree_control" ||
		{ echo "SKIP: cpuset controller not enabled in $set_dir"; exit 77; }
	echo 0 > "$cg/cpuset.cpus"
fi
sh -c "echo \$\$ > '$cg/cgroup.procs' && [ \$(nproc) = 1 ] && exec '$AGENT' --once --no-udev --no-netlink -o json" \
	> "$tmp/node.json" 2>"$tmp/err" || { echo "podagent in a cpuset failed"; cat "$tmp/err"; exit 1; }
[ "$(cap cpu)" = "$all" ] || { echo "in a one-CPU cpuset: cpu $(cap cpu), the machine has $all"; fail=1; }
[ $fail = 0 ] && echo "test_capacity: all passed"
exit $fail
