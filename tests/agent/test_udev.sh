#!/bin/sh
# podagent against recorded device trees (umockdev): the real libudev and
# hwloc calls read the mocked /sys.  A TPU-like host (four 1ae0 processing
# accelerators with /dev/accel nodes and VFIO groups, a VGA adapter and a NIC
# that are not accelerators) and a GPU host (two NVIDIA 3D controllers, BMC
# VGA excluded); then hotplug: remove and add an accelerator under a running
# daemon (umockdev_hotplug.c, built here against libumockdev).
set -u
: "${PODKERNEL_BIN:?}" "${PODKERNEL_SRC:?}"
AGENT=$PODKERNEL_BIN/podagent
FX=$PODKERNEL_SRC/tests/agent/fixtures
. "$PODKERNEL_SRC/tests/need.sh"
need_tool umockdev-run umockdev-wrapper python3 cc pkg-config
pkg-config --exists umockdev-1.0 || { echo "FAIL: test_udev: libumockdev-dev is not installed (make deps installs it)" >&2; exit 1; }
# umockdev's preload library comes before the sanitizer runtime
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

umockdev-run -d "$FX/tpu-host.umockdev" -- "$AGENT" --once --no-netlink \
	--node-name tpu-h0 -o json >"$tmp/tpu.json" 2>"$tmp/tpu.err"
rc=$?
[ $rc = 0 ] || { echo "tpu host: exit $rc"; cat "$tmp/tpu.err"; fail=1; }
python3 - "$tmp/tpu.json" "$tmp/tpu.err" <<'PY' || fail=1
import json, sys
node = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read()
labels = node["metadata"]["labels"]
ann = node["metadata"]["annotations"]
assert labels["accelerator.podkernel.dev/count"] == "4", labels
assert labels["accelerator.podkernel.dev/vendor"] == "google", labels
devs = json.loads(ann["accelerator.podkernel.dev/devices"])
assert [d["pciBusId"] for d in devs] == ["0000:00:0%d.0" % i for i in (4, 5, 6, 7)], devs
assert all(d["vendorId"] == "1ae0" and d["deviceId"] == "005e" for d in devs), devs
assert [d["devnode"] for d in devs] == ["/dev/accel/accel%d" % i for i in range(4)], devs
assert [d["vfioGroup"] for d in devs] == ["/dev/vfio/%d" % i for i in (4, 5, 6, 7)], devs
assert node["status"]["capacity"]["google.com/tpu"] == "4", node["status"]
# the mocked /sys has no NUMA topology: hwloc sees one node, udev says 0,0,1,1
dis = json.loads(ann["agent.podkernel.dev/discovery-disagreement"])
assert len(dis) == 2 and "0000:00:06.0" in dis[0] and "0000:00:07.0" in dis[1], dis
assert "discovery disagreement: 0000:00:06.0" in err, err
print("tpu host: ok")
PY

umockdev-run -d "$FX/gpu-host.umockdev" -- "$AGENT" --once --no-netlink \
	--node-name gpu-h0 -o json >"$tmp/gpu.json" 2>"$tmp/gpu.err"
rc=$?
[ $rc = 0 ] || { echo "gpu host: exit $rc"; cat "$tmp/gpu.err"; fail=1; }
python3 - "$tmp/gpu.json" <<'PY' || fail=1
import json, sys
node = json.load(open(sys.argv[1]))
labels = node["metadata"]["labels"]
ann = node["metadata"]["annotations"]
assert labels["accelerator.podkernel.dev/count"] == "2", labels
assert labels["accelerator.podkernel.dev/vendor"] == "nvidia", labels
# the product name from udev's database (the hwdb's ID_MODEL_FROM_DATABASE)
assert labels["accelerator.podkernel.dev/product"] == "GH100-H100-SXM5-80GB", labels
devs = json.loads(ann["accelerator.podkernel.dev/devices"])
assert [d["pciBusId"] for d in devs] == ["0000:18:00.0", "0000:2a:00.0"], devs
assert devs[0]["product"] == "GH100 [H100 SXM5 80GB]", devs
assert "agent.podkernel.dev/discovery-disagreement" not in ann, ann
assert node["status"]["capacity"]["nvidia.com/gpu"] == "2"
print("gpu host: ok")
PY
umockdev-run -d "$FX/gpu-host.umockdev" -- "$AGENT" --once --no-netlink \
	--node-name gpu-h0 --compatible-labels nvidia -o json >"$tmp/gfd.json" 2>"$tmp/gfd.err" ||
	{ echo "gpu host, GFD labels: failed"; cat "$tmp/gfd.err"; fail=1; }
python3 - "$tmp/gfd.json" <<'PY' || fail=1
import json, sys
labels = json.load(open(sys.argv[1]))["metadata"]["labels"]
assert labels["nvidia.com/gpu.product"] == "GH100-H100-SXM5-80GB", labels
assert labels["nvidia.com/gpu.count"] == "2", labels
print("gpu host, GFD labels: ok")
PY

cc -std=gnu11 -o "$tmp/hotplug" "$PODKERNEL_SRC/tests/agent/umockdev_hotplug.c" \
	$(pkg-config --cflags --libs umockdev-1.0) || { echo "cannot build the hotplug driver"; exit 1; }
mkdir "$tmp/nfd"
umockdev-wrapper "$tmp/hotplug" "$AGENT" "$FX/tpu-host.umockdev" "$tmp/nfd" 2>"$tmp/hp.err" ||
	{ echo "hotplug: failed"; cat "$tmp/hp.err"; fail=1; }
[ $fail = 0 ] && echo "test_udev: all passed"
exit $fail
