"""Debian's python3-kubernetes (22.x) has no spec.schedulingGroup in V1PodSpec:
read_namespaced_pod then replace_namespaced_pod drops it.  The pod must stay
in its PodGroup: the server keeps the field, and the group label names it."""
import json
import sys

from kubernetes import client

url, token, ca = sys.argv[1:4]
cfg = client.Configuration()
cfg.host = url
cfg.ssl_ca_cert = ca
api = client.ApiClient(cfg)
api.set_default_header("Authorization", "Bearer " + token)
core = client.CoreV1Api(api)
body = {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "grouped", "labels": {"scheduling.podkernel.dev/pod-group": "pg"}},
        "spec": {"schedulingGroup": {"podGroupName": "pg"},
                 "containers": [{"name": "c", "image": "busybox"}]}}
api.call_api("/api/v1/namespaces/default/pods", "POST", body=body,
             header_params={"Content-Type": "application/json"}, _preload_content=False)
# The scheduler may write the pod's condition between the read and the
# replace: a 409 then, and the client reads again (client-go's RetryOnConflict).
for attempt in range(10):
    pod = core.read_namespaced_pod("grouped", "default")
    assert not hasattr(pod.spec, "scheduling_group"), "this client knows the field: nothing to test"
    pod.metadata.annotations = {"edited": "yes"}
    try:
        core.replace_namespaced_pod("grouped", "default", pod)
        break
    except client.exceptions.ApiException as e:
        if e.status != 409 or attempt == 9:
            raise
raw = api.call_api("/api/v1/namespaces/default/pods/grouped", "GET",
                   _preload_content=False, response_type=object)[0].data
got = json.loads(raw)
assert got["metadata"]["annotations"]["edited"] == "yes", got
assert got["spec"].get("schedulingGroup") == {"podGroupName": "pg"}, got["spec"]
assert got["metadata"]["labels"]["scheduling.podkernel.dev/pod-group"] == "pg"
# a pod created by the typed client (no field at all) joins by the label alone
p = client.V1Pod(metadata=client.V1ObjectMeta(name="by-label", labels={
    "scheduling.x-k8s.io/pod-group": "pg"}),
    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))
core.create_namespaced_pod("default", p)
table = api.call_api("/api/v1/namespaces/default/pods/by-label", "GET",
                     header_params={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                     _preload_content=False)[0].data
assert b'"pg"' in table, table
print("python replace: ok")
