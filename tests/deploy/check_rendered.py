#!/usr/bin/env python3
"""Check the objects `kubectl kustomize DIR` rendered (YAML on stdin).

Every base: each object has apiVersion, kind and a name, namespaced kinds a
namespace, and the label app.kubernetes.io/part-of=podkernel; references
between objects (ConfigMaps, ServiceAccounts, claims, Service selectors,
RBAC subjects) resolve inside the output or are Secrets docs/install.md tells
the operator to create; the objects come in an order `kubectl apply` can follow
on a fresh cluster (every Namespace before what lives in it, unless the cluster
has it from the start; CRDs before everything else).  Known bases get their own
rules (the agent's RBAC may patch Nodes and manage Leases only, the default
install is attach mode with the agent, and so on).

  check_rendered.py BASE-NAME VERSION BOARD-FILE < rendered.yaml
"""
import re
import sys
import yaml

CLUSTER_KINDS = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
                 "PriorityClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
OPERATOR_SECRETS = {"podkerneld-tls", "podkerneld-tokens", "podkerneld-scheduler-tls"}
errors = []


def err(msg):
    errors.append(msg)


def key(o):
    m = o.get("metadata", {})
    return (o.get("kind"), m.get("namespace"), m.get("name"))


def generic(objs):
    for o in objs:
        m = o.get("metadata") or {}
        what = "%s/%s" % (o.get("kind"), m.get("name"))
        if not o.get("apiVersion") or not o.get("kind") or not m.get("name"):
            err("%s: apiVersion, kind and metadata.name are required" % what)
        if o.get("kind") not in CLUSTER_KINDS and not m.get("namespace"):
            err("%s: no namespace" % what)
        if (m.get("labels") or {}).get("app.kubernetes.io/part-of") != "podkernel":
            err("%s: no app.kubernetes.io/part-of=podkernel label" % what)


# Namespaces every cluster has before anything is applied to it.
BUILTIN_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}


def order(objs):
    """kubectl apply creates the objects in the order rendered: an object in a
    namespace nobody creates, or one rendered before its Namespace, fails on a
    fresh cluster ("namespaces ... not found"); so does a CRD that comes after
    a workload (a resource it defines would be unknown)."""
    made = set()
    seen_other = False
    for i, o in enumerate(objs):
        m = o.get("metadata") or {}
        what = "%s/%s" % (o.get("kind"), m.get("name"))
        if o.get("kind") == "Namespace":
            made.add(m.get("name"))
        ns = m.get("namespace")
        if ns and ns not in BUILTIN_NAMESPACES and ns not in made:
            later = any(x.get("kind") == "Namespace" and x["metadata"]["name"] == ns for x in objs[i:])
            err("%s: namespace %s %s" % (what, ns, "is rendered after it" if later else "is created by nobody"))
        if o.get("kind") == "CustomResourceDefinition" and seen_other:
            err("%s: a CRD after other objects" % what)
        if o.get("kind") not in ("Namespace", "CustomResourceDefinition"):
            seen_other = True


def hardened(objs):
    """Every workload runs under the runtime's seccomp profile, and every
    Deployment holds liveness off until it has started."""
    for o in objs:
        if o.get("kind") not in ("Deployment", "DaemonSet", "StatefulSet"):
            continue
        name = o["metadata"]["name"]
        spec = o["spec"]["template"]["spec"]
        pod_prof = ((spec.get("securityContext") or {}).get("seccompProfile") or {}).get("type")
        for c in spec["containers"]:
            prof = ((c.get("securityContext") or {}).get("seccompProfile") or {}).get("type")
            if (prof or pod_prof) != "RuntimeDefault":
                err("%s/%s: no seccompProfile RuntimeDefault" % (name, c["name"]))
            if o["kind"] == "Deployment" and "livenessProbe" in c and "startupProbe" not in c:
                err("%s/%s: a livenessProbe without a startupProbe" % (name, c["name"]))


def pod_refs(objs, o):
    """References of a workload's pod template, resolved in the output."""
    ns = o["metadata"]["namespace"]
    spec = o["spec"]["template"]["spec"]
    have = {key(x) for x in objs}
    sa = spec.get("serviceAccountName")
    if sa and ("ServiceAccount", ns, sa) not in have:
        err("%s: ServiceAccount %s/%s is not in the base" % (o["metadata"]["name"], ns, sa))
    for v in spec.get("volumes", []):
        if "configMap" in v and ("ConfigMap", ns, v["configMap"]["name"]) not in have:
            err("volume %s: ConfigMap %s is not in the base" % (v["name"], v["configMap"]["name"]))
        if "persistentVolumeClaim" in v and ("PersistentVolumeClaim", ns,
                                             v["persistentVolumeClaim"]["claimName"]) not in have:
            err("volume %s: claim is not in the base" % v["name"])
        if "secret" in v and v["secret"]["secretName"] not in OPERATOR_SECRETS and \
                ("Secret", ns, v["secret"]["secretName"]) not in have:
            err("volume %s: Secret %s is neither in the base nor documented" %
                (v["name"], v["secret"]["secretName"]))
    labels = o["spec"]["template"]["metadata"]["labels"]
    sel = o["spec"]["selector"]["matchLabels"]
    if any(labels.get(k) != v for k, v in sel.items()):
        err("%s: selector does not match its template" % o["metadata"]["name"])


def find(objs, kind, name):
    got = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    if len(got) != 1:
        err("expected one %s %s, found %d" % (kind, name, len(got)))
        return None
    return got[0]


def agent_probe(c):
    """A liveness probe on the agent's loopback health port (hostNetwork)."""
    args = c.get("args", [])
    hl = [a.split("=", 1)[1] for a in args if a.startswith("--health-listen=")]
    probe = (c.get("livenessProbe") or {}).get("httpGet") or {}
    if not hl or not hl[0].startswith("127.0.0.1:") or probe.get("host") != "127.0.0.1" or \
            str(probe.get("port")) != hl[0].split(":")[1] or probe.get("path") != "/healthz":
        err("no liveness probe on the agent's loopback /healthz: %s %s" % (hl, probe))


def check_agent(objs, version, board):
    ds = find(objs, "DaemonSet", "podagent")
    if not ds:
        return
    spec = ds["spec"]["template"]["spec"]
    c = spec["containers"][0]
    args = c.get("args", [])
    if not spec.get("hostNetwork"):
        err("the agent needs hostNetwork for ICI links")
    if any(e.get("name") == "TPU_WORKER_ID" for e in c.get("env", [])):
        err("TPU_WORKER_ID is not a DaemonSet's identity")
    if not any(e.get("name") == "NODE_NAME" and
               e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName"
               for e in c.get("env", [])):
        err("NODE_NAME must come from spec.nodeName")
    if not c.get("securityContext", {}).get("runAsNonRoot"):
        err("the agent runs as root")
    lease_ns = [a.split("=", 1)[1] for a in args if a.startswith("--lease-namespace=")]
    if lease_ns != ["podkernel-node-lease"]:
        err("the agent's Leases must live outside kube-node-lease: %s" % args)
    if "--register-node" in args:
        err("the DaemonSet must not register Nodes")
    agent_probe(c)
    pod_refs(objs, ds)
    # the board ConfigMap holds the board file
    vol = [v for v in spec["volumes"] if "configMap" in v]
    cm = [o for o in objs if o["kind"] == "ConfigMap" and vol and
          o["metadata"]["name"] == vol[0]["configMap"]["name"]]
    if not cm or cm[0]["data"].get("board.yaml") != open(board).read():
        err("the board ConfigMap does not hold %s" % board)
    # the agents run only where the board's accelerator is (its PCI vendor)
    acc = (yaml.safe_load(open(board)).get("spec") or {}).get("accelerator") or {}
    vendors = {str(acc["vendorId"])} if acc.get("vendorId") else set()
    want = {"feature.node.kubernetes.io/pci-%s.present" % v: "true" for v in vendors}
    if not want or spec.get("nodeSelector") != want:
        err("nodeSelector %s, expected the board's PCI vendor %s" % (spec.get("nodeSelector"), want))
    # RBAC: patch Nodes, manage Leases, nothing else
    cr = find(objs, "ClusterRole", "podagent")
    if cr and [(r["apiGroups"], r["resources"], sorted(r["verbs"])) for r in cr["rules"]] != \
            [([""], ["nodes"], ["get", "patch"])]:
        err("ClusterRole podagent may do more than get and patch Nodes: %s" % cr["rules"])
    role = find(objs, "Role", "podagent-leases")
    if role:
        if not lease_ns or role["metadata"]["namespace"] != lease_ns[0]:
            err("the Lease Role is not in the agent's lease namespace")
        for r in role["rules"]:
            if r["apiGroups"] != ["coordination.k8s.io"] or r["resources"] != ["leases"] or \
                    not set(r["verbs"]) <= {"get", "create", "update", "patch"}:
                err("Role podagent-leases allows more than Leases: %s" % r)
    for b in [o for o in objs if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]:
        for s in b["subjects"]:
            if (s["kind"], s.get("namespace"), s["name"]) != \
                    ("ServiceAccount", ds["metadata"]["namespace"], spec["serviceAccountName"]):
                err("%s binds %s" % (b["metadata"]["name"], s))
        ref = b["roleRef"]
        if not [o for o in objs if o["kind"] == ref["kind"] and o["metadata"]["name"] == ref["name"]]:
            err("%s names a missing %s" % (b["metadata"]["name"], ref["kind"]))
    if not find(objs, "Namespace", "podkernel-node-lease"):
        err("the lease namespace is not created")
    check_agent_policy(objs, ds)


# Label keys the agent publishes (topology.h, report.c) and keys it must not touch.
AGENT_LABELS = ["topology.podkernel.dev/cube", "topology.podkernel.dev/coords",
                "accelerator.podkernel.dev/count", "accelerator.podkernel.dev/product",
                "numa.podkernel.dev/count", "nvidia.com/gpu.present", "nvidia.com/gpu.count",
                "nvidia.com/gpu.product", "cloud.google.com/gke-tpu-topology"]
FOREIGN_LABELS = ["kubernetes.io/hostname", "node-role.kubernetes.io/control-plane",
                  "node.kubernetes.io/exclude-from-external-load-balancers",
                  "evilpodkernel.dev/x", "podkernel.dev.evil.com/x", "nvidia.com/mig.config",
                  "example.com/nvidia.com/gpu.x", "team"]
AGENT_ANNOTATIONS = ["accelerator.podkernel.dev/devices", "agent.podkernel.dev/owned-labels",
                     "ici.podkernel.dev/links"]


def cel_string(expr):
    """The value of a CEL single-quoted string literal (only \\ escapes used)."""
    expr = expr.strip()
    if not (expr.startswith("'") and expr.endswith("'")):
        err("node policy: %s is not a string literal" % expr)
        return "$^"
    return expr[1:-1].replace("\\\\", "\\")


def check_agent_policy(objs, ds):
    """The ValidatingAdmissionPolicy that narrows the agents' Node writes."""
    import re
    pol = find(objs, "ValidatingAdmissionPolicy", "podagent-node-writes")
    bind = find(objs, "ValidatingAdmissionPolicyBinding", "podagent-node-writes")
    if not pol or not bind:
        return
    spec = pol["spec"]
    if spec.get("failurePolicy") != "Fail":
        err("node policy: failurePolicy must be Fail")
    if bind["spec"].get("policyName") != "podagent-node-writes" or \
            bind["spec"].get("validationActions") != ["Deny"]:
        err("node policy: the binding must Deny with podagent-node-writes")
    rules = spec["matchConstraints"]["resourceRules"]
    if not any(r["apiGroups"] == [""] and {"nodes", "nodes/status"} <= set(r["resources"]) and
               "UPDATE" in r["operations"] for r in rules):
        err("node policy: does not match updates of nodes and nodes/status: %s" % rules)
    sa = "system:serviceaccount:%s:%s" % (ds["metadata"]["namespace"],
                                          ds["spec"]["template"]["spec"]["serviceAccountName"])
    if not any(sa in c["expression"] for c in spec.get("matchConditions", [])):
        err("node policy: no match condition names the agent's service account %s" % sa)
    var = {v["name"]: v["expression"] for v in spec.get("variables", [])}
    exprs = [str(v["expression"]) for v in spec["validations"]]
    text = " ".join(exprs)
    if "authentication.kubernetes.io/node-name" not in var.get("nodeName", "") or \
            not any("object.metadata.name == variables.nodeName" in e for e in exprs):
        err("node policy: the written Node is not checked against the token's node-name claim")
    if "object.spec == oldObject.spec" not in text:
        err("node policy: spec (taints, unschedulable) is not kept unchanged")
    if 'request.operation == "UPDATE"' not in text:
        err("node policy: creates and deletes are not refused")
    owned = re.compile(cel_string(var.get("ownedLabel", "''")))
    for k in AGENT_LABELS:
        if not owned.match(k):
            err("node policy: the agent's own label %s would be refused" % k)
    for k in FOREIGN_LABELS:
        if owned.match(k):
            err("node policy: the agent could write the foreign label %s" % k)
    owned_ann = re.compile(cel_string(var.get("ownedAnnotation", "''")))
    for k in AGENT_ANNOTATIONS:
        if not owned_ann.match(k):
            err("node policy: the agent's annotation %s would be refused" % k)
    if owned_ann.match("nvidia.com/gpu.count") or owned_ann.match("kubectl.kubernetes.io/x"):
        err("node policy: foreign annotations are writable")
    if "k.matches(variables.ownedLabel)" not in text or \
            "k.matches(variables.ownedAnnotation)" not in text:
        err("node policy: the label and annotation rules do not use the owned-key patterns")


def check_appliance(objs, version, _board):
    d = find(objs, "Deployment", "podkerneld")
    if not d:
        return
    c = d["spec"]["template"]["spec"]["containers"][0]
    if d["spec"].get("replicas") != 1 or d["spec"].get("strategy", {}).get("type") != "Recreate":
        err("one store, one replica: replicas 1 and strategy Recreate")
    args = c.get("args", [])
    for want in ("--tls-cert-file=", "--tls-private-key-file=", "--token-auth-file=",
                 "--data-dir=/var/lib/podkerneld"):
        if not any(a.startswith(want) for a in args):
            err("podkerneld lacks %s" % want)
    pod_refs(objs, d)
    svc = find(objs, "Service", "podkerneld")
    if svc and any(d["spec"]["template"]["metadata"]["labels"].get(k) != v
                   for k, v in svc["spec"]["selector"].items()):
        err("Service podkerneld selects no pod of the Deployment")


def check_structural(crd, path, node):
    """A structural schema (what kube-apiserver requires to prune and
    validate): every node has a type unless it is int-or-string or keeps
    unknown fields; no references; a keyed list requires its keys."""
    if not isinstance(node, dict):
        err("CRD %s: %s is not a schema" % (crd, path))
        return
    if "$ref" in node or "allOf" in node:
        err("CRD %s: %s uses a reference" % (crd, path))
    if "type" not in node and not node.get("x-kubernetes-int-or-string") and \
            not node.get("x-kubernetes-preserve-unknown-fields"):
        err("CRD %s: %s has no type" % (crd, path))
    for k, sub in node.get("properties", {}).items():
        check_structural(crd, "%s.%s" % (path, k), sub)
    if "items" in node:
        check_structural(crd, path + "[]", node["items"])
        if node.get("x-kubernetes-list-type") == "map":
            missing = set(node.get("x-kubernetes-list-map-keys", [])) - \
                set(node["items"].get("required", []))
            if missing:
                err("CRD %s: %s: list-map keys %s are not required" % (crd, path, sorted(missing)))
    if isinstance(node.get("additionalProperties"), dict):
        check_structural(crd, path + "{}", node["additionalProperties"])


def check_crd_version(crd, v):
    schema = v.get("schema", {}).get("openAPIV3Schema", {})
    check_structural(crd, "", schema)
    spec = schema.get("properties", {}).get("spec", {})
    if spec.get("x-kubernetes-preserve-unknown-fields") or not spec.get("properties"):
        err("CRD %s: spec has no schema (typos would pass)" % crd)
    cols = v.get("additionalPrinterColumns", [])
    if not any(c.get("jsonPath") == ".metadata.creationTimestamp" for c in cols):
        err("CRD %s: no Age printer column" % crd)
    for c in cols:
        if c.get("type") not in ("string", "integer", "number", "boolean", "date") or \
                not c.get("jsonPath", "").startswith("."):
            err("CRD %s: printer column %s" % (crd, c))


def check_crds(objs, _version, _board):
    names = set()
    for o in objs:
        if o["kind"] != "CustomResourceDefinition":
            err("crds: unexpected %s" % o["kind"])
            continue
        s = o["spec"]
        if o["metadata"]["name"] != "%s.%s" % (s["names"]["plural"], s["group"]):
            err("CRD %s: name is not plural.group" % o["metadata"]["name"])
        if s["group"].endswith(".k8s.io") and \
                "api-approved.kubernetes.io" not in o["metadata"].get("annotations", {}):
            err("CRD %s: a k8s.io group needs api-approved.kubernetes.io" % o["metadata"]["name"])
        if [v["name"] for v in s["versions"] if v["served"] and v["storage"]] != ["v1alpha3"]:
            err("CRD %s: v1alpha3 must be served and stored" % o["metadata"]["name"])
        for v in s["versions"]:
            check_crd_version(o["metadata"]["name"], v)
        names.add(s["names"]["kind"])
    if names != {"Workload", "PodGroup", "CompositePodGroup"}:
        err("crds: kinds %s" % sorted(names))


# What attach mode calls (README, "Running against an existing cluster"): the
# ClusterRole grants exactly this, the Lease Role only the election's Lease.
ATTACH_RULES = {
    ("", "nodes"): {"get", "list", "watch"},
    ("", "namespaces"): {"get", "list", "watch"},
    ("", "pods"): {"get", "list", "watch", "delete"},
    ("", "pods/binding"): {"create"},
    ("", "persistentvolumes"): {"get", "list", "watch"},
    ("", "persistentvolumeclaims"): {"get", "list", "watch", "patch"},
    ("storage.k8s.io", "storageclasses"): {"get", "list", "watch"},
    ("storage.k8s.io", "csinodes"): {"get", "list", "watch"},
    ("", "pods/status"): {"update"},
    ("scheduling.k8s.io", "priorityclasses"): {"get", "list", "watch"},
    ("scheduling.k8s.io", "workloads"): {"get", "list", "watch"},
    ("scheduling.k8s.io", "podgroups"): {"get", "list", "watch"},
    ("scheduling.k8s.io", "compositepodgroups"): {"get", "list", "watch"},
    ("scheduling.k8s.io", "podgroups/status"): {"update"},
    ("scheduling.k8s.io", "compositepodgroups/status"): {"update"},
    ("resource.k8s.io", "deviceclasses"): {"get", "list", "watch"},
    ("resource.k8s.io", "resourceslices"): {"get", "list", "watch"},
    ("resource.k8s.io", "resourceclaims"): {"get", "list", "watch"},
    ("resource.k8s.io", "resourceclaims/status"): {"update"},
    ("events.k8s.io", "events"): {"create"},
}


def check_default(objs, version, board):
    """deploy/ itself: the agent on every node and podkerneld in attach mode,
    with the CRDs; no standalone appliance (no store, no PersistentVolumeClaim)."""
    for kind, name in (("DaemonSet", "podagent"), ("Deployment", "podkerneld-scheduler")):
        if not find(objs, kind, name):
            err("the default install has no %s %s" % (kind, name))
    if len([o for o in objs if o["kind"] == "CustomResourceDefinition"]) != 3:
        err("the default install does not carry the three KEP-6012 CRDs")
    for o in objs:
        if o["kind"] == "PersistentVolumeClaim" or \
                (o["kind"] == "Deployment" and o["metadata"]["name"] == "podkerneld"):
            err("the standalone appliance (%s/%s) is in the default install" %
                (o["kind"], o["metadata"]["name"]))
    # each part under its own base's rules (RBAC bindings name only its own account)
    def sched(o):
        return "scheduler" in o["metadata"]["name"] or \
            (o["kind"] == "Namespace" and o["metadata"]["name"] == "podkernel-system")
    check_agent([o for o in objs if not sched(o) and o["kind"] != "CustomResourceDefinition"],
                version, board)
    check_attach([o for o in objs if sched(o)], version, board)


def rule_map(rules):
    got = {}
    for r in rules:
        for g in r["apiGroups"]:
            for res in r["resources"]:
                names = tuple(r.get("resourceNames", []))
                got.setdefault((g, res, names), set()).update(r["verbs"])
    return got


def check_attach(objs, version, _board):
    d = find(objs, "Deployment", "podkerneld-scheduler")
    if not d:
        return
    c = d["spec"]["template"]["spec"]["containers"][0]
    args = c.get("args", [])
    for want in ("--in-cluster", "--leader-elect", "--scheduler-name=podkernel",
                 "--leader-elect-namespace=kube-system", "--leader-elect-lease-name=podkernel-scheduler"):
        if want not in args:
            err("podkerneld lacks %s" % want)
    if any(a.startswith(("--data-dir", "--token-auth-file")) for a in args):
        err("attach mode has no store and no token file: %s" % args)
    if d["spec"].get("replicas", 1) < 2:
        err("leader election wants a standby: replicas >= 2")
    # the listen address takes bearer tokens (/ui/api/placement): TLS only
    for want in ("--tls-cert-file=/etc/podkernel/tls/tls.crt",
                 "--tls-private-key-file=/etc/podkernel/tls/tls.key"):
        if want not in args:
            err("the health port is not TLS: %s missing" % want)
    for p in ("startupProbe", "readinessProbe", "livenessProbe"):
        if (c.get(p) or {}).get("httpGet", {}).get("scheme") != "HTTPS":
            err("%s is not over HTTPS" % p)
    svc = find(objs, "Service", "podkerneld-scheduler")
    if not svc or [p["port"] for p in svc["spec"]["ports"]] != [10259] or \
            svc["spec"]["selector"] != d["spec"]["selector"]["matchLabels"]:
        err("no Service podkerneld-scheduler on 10259 selecting the scheduler's pods")
    pdb = find(objs, "PodDisruptionBudget", "podkerneld-scheduler")
    if not pdb or pdb["spec"].get("minAvailable") != 1 or \
            pdb["spec"]["selector"]["matchLabels"] != d["spec"]["selector"]["matchLabels"]:
        err("no PodDisruptionBudget keeping one scheduler through a drain")
    pod_refs(objs, d)
    cr = find(objs, "ClusterRole", "podkernel-scheduler")
    if cr:
        want = {(g, r, ()): v for (g, r), v in ATTACH_RULES.items()}
        if rule_map(cr["rules"]) != want:
            err("ClusterRole podkernel-scheduler is not exactly attach mode's calls: %s" %
                rule_map(cr["rules"]))
    role = find(objs, "Role", "podkernel-scheduler-lease")
    if role:
        if role["metadata"]["namespace"] != "kube-system":
            err("the Lease Role is not in kube-system")
        if rule_map(role["rules"]) != {
                ("coordination.k8s.io", "leases", ()): {"create"},
                ("coordination.k8s.io", "leases", ("podkernel-scheduler",)): {"get", "update"}}:
            err("Role podkernel-scheduler-lease allows more than the election's Lease: %s" %
                role["rules"])
    sa = d["spec"]["template"]["spec"]["serviceAccountName"]
    for b in [o for o in objs if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]:
        for s in b["subjects"]:
            if (s["kind"], s.get("namespace"), s["name"]) != \
                    ("ServiceAccount", d["metadata"]["namespace"], sa):
                err("%s binds %s" % (b["metadata"]["name"], s))


def check_agent_node_identity(objs, version, board):
    """The overlay: the kubelet's identity, no RBAC, no Lease of the agent's own."""
    ds = find(objs, "DaemonSet", "podagent")
    if not ds:
        return
    spec = ds["spec"]["template"]["spec"]
    args = spec["containers"][0]["args"]
    for want in ("--kubeconfig=/etc/kubernetes/kubelet.conf", "--no-lease"):
        if want not in args:
            err("node identity: %s missing from %s" % (want, args))
    if "--in-cluster" in args or spec.get("automountServiceAccountToken") is not False:
        err("node identity: the service account's token must not be used")
    agent_probe(spec["containers"][0])
    mounts = {m["mountPath"]: m for m in spec["containers"][0]["volumeMounts"]}
    for path in ("/etc/kubernetes/kubelet.conf", "/var/lib/kubelet/pki"):
        if not mounts.get(path, {}).get("readOnly"):
            err("node identity: %s must be mounted read-only" % path)
    rbac = [o["kind"] for o in objs if o["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role",
                                                      "RoleBinding")]
    if rbac:
        err("node identity: RBAC left in the overlay: %s" % rbac)
    pod_refs(objs, ds)


# What --queues=podkernel adds (docs/attach.md): the Kueue kinds and what they
# queue read, admission and the queues' status written, a Kueue pod group's
# PodGroup created and deleted.
QUEUE_RULES = {
    ("kueue.x-k8s.io", r): {"get", "list", "watch"}
    for r in ("resourceflavors", "topologies", "cohorts", "clusterqueues", "localqueues",
              "workloadpriorityclasses")}
QUEUE_RULES.update({
    ("kueue.x-k8s.io", "clusterqueues/status"): {"get", "update"},
    ("kueue.x-k8s.io", "localqueues/status"): {"get", "update"},
    ("batch", "jobs"): {"get", "list", "watch", "update"},
    ("jobset.x-k8s.io", "jobsets"): {"get", "list", "watch", "update"},
    ("", "pods"): {"update"},
    ("scheduling.k8s.io", "podgroups"): {"create", "delete"}})


def check_attach_queues(objs, version, board):
    """deploy/scheduler-queues: the scheduler with --queues=podkernel and
    exactly the extra rights its calls need, bound to the scheduler alone."""
    check_attach(objs, version, board)
    d = find(objs, "Deployment", "podkerneld-scheduler")
    if d and "--queues=podkernel" not in d["spec"]["template"]["spec"]["containers"][0].get("args", []):
        err("the scheduler lacks --queues=podkernel")
    cr = find(objs, "ClusterRole", "podkernel-scheduler-queues")
    want = {(g, r, ()): v for (g, r), v in QUEUE_RULES.items()}
    if not cr or rule_map(cr["rules"]) != want:
        err("ClusterRole podkernel-scheduler-queues is not exactly the queues' calls: %s" %
            (rule_map(cr["rules"]) if cr else None))
    if not find(objs, "ClusterRoleBinding", "podkernel-scheduler-queues"):
        err("ClusterRole podkernel-scheduler-queues is bound to nobody")


CHECKS = {"agent": check_agent, "agent-gpu": check_agent, "agent-gb200": check_agent,
          "agent-node-identity": check_agent_node_identity,
          "standalone": check_appliance, "crds": check_crds,
          "scheduler": check_attach, "scheduler-queues": check_attach_queues,
          "default": check_default}


# REGISTRY-HOST[:PORT]/PATH@sha256:HEX: a registry named (no default one), no tag
PINNED = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:[0-9]+)?/[a-z0-9._/-]+@sha256:[0-9a-f]{64}$")


def pins():
    """deploy/images: the component every base includes, name -> NEWNAME@DIGEST."""
    with open("deploy/images/kustomization.yaml") as f:
        comp = yaml.safe_load(f)
    if comp.get("kind") != "Component":
        err("deploy/images is not a kustomize Component")
    return {i["name"]: "%s@%s" % (i.get("newName", i["name"]), i.get("digest"))
            for i in comp.get("images", [])}


def images(objs):
    """Every container of every workload runs an image by digest, the one deploy/images pins."""
    pinned = pins()
    for o in objs:
        spec = (o.get("spec") or {}).get("template", {}).get("spec") or {}
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            what = "%s/%s container %s" % (o["kind"], o["metadata"]["name"], c.get("name"))
            img = c.get("image", "")
            if not PINNED.match(img):
                err("%s: image %s is not REGISTRY/PATH@sha256:DIGEST" % (what, img))
            elif img not in pinned.values():
                err("%s: image %s is not one deploy/images pins (%s)" %
                    (what, img, ", ".join(sorted(pinned.values()))))


def main():
    base, version, board = sys.argv[1:4]
    objs = [o for o in yaml.safe_load_all(sys.stdin) if o]
    if not objs:
        err("%s renders no objects" % base)
    generic(objs)
    order(objs)
    hardened(objs)
    images(objs)
    if base in CHECKS and objs:
        CHECKS[base](objs, version, board)
    for e in errors:
        print("deploy/%s: %s" % (base, e))
    if not errors:
        print("deploy/%s: %d objects ok" % (base, len(objs)))
    return 1 if errors else 0


sys.exit(main())
