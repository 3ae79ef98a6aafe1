"""podkerneld driven by the official Kubernetes Python client (Debian's
python3-kubernetes): VersionApi, CoreV1Api CRUD with dry runs and a
preconditioned delete, a watch.Watch() stream (which sends watch=True),
paging with limit/continue, and CustomObjectsApi on the workload kinds
(Workload, PodGroup, CompositePodGroup, JobSet) including merge patches and
a watch.

Usage: /usr/bin/python3 client_test.py URL ADMIN_TOKEN VIEW_TOKEN
Exits non-zero with the failed expectation on stderr.
"""
import sys
import threading

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

URL, TOKEN, VIEW = sys.argv[1], sys.argv[2], sys.argv[3]
NS = "default"
GROUP, VERSION = "scheduling.k8s.io", "v1alpha3"


def api_client(token):
    cfg = client.Configuration()
    cfg.host = URL
    cfg.api_key = {"authorization": token}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    cfg.verify_ssl = False
    return client.ApiClient(cfg)


def check(cond, what):
    if not cond:
        print("FAIL: " + what, file=sys.stderr)
        sys.exit(1)
    print("ok: " + what)


def expect_status(code, fn, what):
    try:
        fn()
    except ApiException as e:
        check(e.status == code, "%s -> %d (got %d: %s)" % (what, code, e.status, e.body[:200]))
        return
    check(False, "%s -> %d (it succeeded)" % (what, code))


def pod(name, labels=None):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {"app": "py"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))


def test_version(api):
    info = client.VersionApi(api).get_code()
    check(info.major == "1" and info.build_date and info.git_version.startswith("v1."),
          "VersionApi.get_code: %s built %s" % (info.git_version, info.build_date))


def test_core(api, view):
    core = client.CoreV1Api(api)
    created = core.create_namespaced_pod(NS, pod("py-1"))
    check(created.metadata.uid, "create_namespaced_pod")
    got = core.read_namespaced_pod("py-1", NS)
    # (the scheduling loop may have written the pod since: compare identities)
    check(got.metadata.uid == created.metadata.uid, "read_namespaced_pod")
    # Dry runs write nothing, whatever the verb.
    core.create_namespaced_pod(NS, pod("py-dry"), dry_run="All")
    expect_status(404, lambda: core.read_namespaced_pod("py-dry", NS), "dry-run create left no pod")
    patched = core.patch_namespaced_pod("py-1", NS, {"metadata": {"labels": {"tier": "x"}}},
                                        dry_run="All")
    check(patched.metadata.labels.get("tier") == "x", "dry-run patch returns the result")
    check("tier" not in (core.read_namespaced_pod("py-1", NS).metadata.labels or {}),
          "dry-run patch stored nothing")
    core.delete_namespaced_pod("py-1", NS, body=client.V1DeleteOptions(dry_run=["All"]))
    check(core.read_namespaced_pod("py-1", NS).metadata.name == "py-1",
          "DeleteOptions(dry_run=['All']) deleted nothing")
    expect_status(409, lambda: core.delete_namespaced_pod(
        "py-1", NS, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="x"))),
        "delete with a wrong uid precondition")
    # A reader may read, not write.
    view_core = client.CoreV1Api(view)
    check(len(view_core.list_namespaced_pod(NS).items) >= 1, "viewer lists pods")
    expect_status(403, lambda: view_core.create_namespaced_pod(NS, pod("py-v")), "viewer creates")
    # Paging: limit and continue.
    for i in range(5):
        core.create_namespaced_pod(NS, pod("py-page-%d" % i, {"app": "page"}))
    first = core.list_namespaced_pod(NS, label_selector="app=page", limit=2)
    check(len(first.items) == 2 and first.metadata._continue, "list with limit=2")
    names = [p.metadata.name for p in first.items]
    cont = first.metadata._continue
    while cont:
        page = core.list_namespaced_pod(NS, label_selector="app=page", limit=2, _continue=cont)
        names += [p.metadata.name for p in page.items]
        cont = page.metadata._continue
    check(sorted(names) == ["py-page-%d" % i for i in range(5)], "continue walks every page")
    full = core.list_namespaced_pod(NS, label_selector="app=page")
    check(len(full.items) == 5 and not full.metadata._continue, "list without limit is complete")


def test_watch(api):
    core = client.CoreV1Api(api)
    start = core.list_namespaced_pod(NS).metadata.resource_version
    seen = []

    def writer():
        core.create_namespaced_pod(NS, pod("py-w"))
        core.patch_namespaced_pod("py-w", NS, {"metadata": {"labels": {"step": "2"}}})
        core.delete_namespaced_pod("py-w", NS)

    w = watch.Watch()
    t = threading.Timer(0.5, writer)
    t.start()
    for ev in w.stream(core.list_namespaced_pod, NS, resource_version=start, timeout_seconds=20):
        if ev["object"].metadata.name == "py-w":
            seen.append(ev["type"])
        if ev["type"] == "DELETED" and ev["object"].metadata.name == "py-w":
            w.stop()
    t.join()
    # The scheduling loop may add MODIFIED events of its own (PodScheduled).
    check(seen[:2] == ["ADDED", "MODIFIED"] and seen[-1] == "DELETED" and "ADDED" not in seen[1:],
          "watch.Watch() stream: %s" % seen)


def test_custom_objects(api):
    co = client.CustomObjectsApi(api)
    wl = {"apiVersion": GROUP + "/" + VERSION, "kind": "Workload",
          "metadata": {"name": "py-wl"},
          "spec": {"podGroupTemplates": [
              {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}]}}
    co.create_namespaced_custom_object(GROUP, VERSION, NS, "workloads", wl)
    got = co.get_namespaced_custom_object(GROUP, VERSION, NS, "workloads", "py-wl")
    check(got["spec"]["podGroupTemplates"][0]["name"] == "workers", "Workload through CustomObjectsApi")
    pg = {"apiVersion": GROUP + "/" + VERSION, "kind": "PodGroup",
          "metadata": {"name": "py-pg"},
          "spec": {"workloadRef": {"workloadName": "py-wl", "templateName": "workers"},
                   "schedulingPolicy": {"gang": {"minCount": 2}}}}
    co.create_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", pg)
    out = co.patch_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", "py-pg",
                                            {"metadata": {"labels": {"team": "py"}}})
    check(out["metadata"]["labels"]["team"] == "py", "merge patch of a PodGroup")
    lst = co.list_namespaced_custom_object(GROUP, VERSION, NS, "podgroups")
    check(any(i["metadata"]["name"] == "py-pg" for i in lst["items"]), "list PodGroups")
    cpg = {"apiVersion": GROUP + "/" + VERSION, "kind": "CompositePodGroup",
           "metadata": {"name": "py-cpg"},
           "spec": {"workloadRef": {"workloadName": "py-wl", "templateName": "slice"},
                    "schedulingPolicy": {"gang": {"minGroupCount": 1}}}}
    co.create_namespaced_custom_object(GROUP, VERSION, NS, "compositepodgroups", cpg, dry_run="All")
    expect_status(404, lambda: co.get_namespaced_custom_object(
        GROUP, VERSION, NS, "compositepodgroups", "py-cpg"), "dry-run CompositePodGroup")
    js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
          "metadata": {"name": "py-js"},
          "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {
              "parallelism": 1, "completions": 1, "template": {"spec": {
                  "containers": [{"name": "c", "image": "busybox"}]}}}}}]}}
    co.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", NS, "jobsets", js)
    check(co.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", NS, "jobsets",
                                          "py-js")["metadata"]["uid"], "JobSet through CustomObjectsApi")
    # A watch on a custom resource.
    rv = lst["metadata"]["resourceVersion"]
    w = watch.Watch()
    kinds = []
    threading.Timer(0.5, lambda: co.delete_namespaced_custom_object(
        GROUP, VERSION, NS, "podgroups", "py-pg")).start()
    for ev in w.stream(co.list_namespaced_custom_object, GROUP, VERSION, NS, "podgroups",
                       resource_version=rv, timeout_seconds=20):
        kinds.append(ev["type"])
        if ev["type"] == "DELETED":
            w.stop()
    check("DELETED" in kinds, "watch of PodGroups: %s" % kinds)


def main():
    api, view = api_client(TOKEN), api_client(VIEW)
    test_version(api)
    test_core(api, view)
    test_watch(api)
    test_custom_objects(api)
    print("python client: ok")


if __name__ == "__main__":
    main()
