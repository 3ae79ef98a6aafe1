// podkerneld driven by the official Kubernetes JavaScript client
// (@kubernetes/client-node 1.x, installed by make deps into node_modules
// here): VersionApi, CoreV1Api list/create/merge patch/delete, an Informer
// that must see add, update and delete, and CustomObjectsApi on a PodGroup
// with a merge patch, and a pod created through the typed model (which drops
// spec.schedulingGroup) kept in its PodGroup by the group label.
//
// Usage: node client_test.mjs URL ADMIN_TOKEN; exits non-zero on a failed
// expectation.
import * as k8s from '@kubernetes/client-node';

const [url, token] = process.argv.slice(2);
const NS = 'default';

function check(cond, what) {
  if (!cond) {
    console.error(`FAIL: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

function withTimeout(promise, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'pk', server: url, skipTLSVerify: true }],
  users: [{ name: 'u', token }],
  contexts: [{ name: 'pk', cluster: 'pk', user: 'u', namespace: NS }],
  currentContext: 'pk',
});
const core = kc.makeApiClient(k8s.CoreV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

function pod(name) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'js' } },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
}

async function testVersion() {
  const info = await kc.makeApiClient(k8s.VersionApi).getCode();
  check(info.major === '1' && info.buildDate && info.gitVersion.startsWith('v1.'),
    `VersionApi.getCode: ${info.gitVersion}`);
}

async function testInformer() {
  const seen = [];
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/pods`,
    () => core.listNamespacedPod({ namespace: NS }), 'app=js');
  const note = (verb) => (obj) => {
    if (obj.metadata.name !== 'js-1') return;
    seen.push(verb);
    if (verb === 'delete') done();
  };
  informer.on('add', note('add'));
  informer.on('update', note('update'));
  informer.on('delete', note('delete'));
  let stopping = false;
  informer.on('error', (err) => { if (!stopping) console.error('informer error', err); });
  await withTimeout(informer.start(), 20000, 'informer start');

  await core.createNamespacedPod({ namespace: NS, body: pod('js-1') });
  const list = await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=js' });
  check(list.items.some((p) => p.metadata.name === 'js-1'), 'listNamespacedPod');
  const patched = await core.patchNamespacedPod(
    { name: 'js-1', namespace: NS, body: { metadata: { labels: { tier: 'gold' } } } }, merge);
  check(patched.metadata.labels.tier === 'gold' && patched.metadata.labels.app === 'js',
    'merge patch keeps the other labels');
  // The informer's cache follows the patch.
  await withTimeout((async () => {
    for (;;) {
      const cached = informer.get('js-1', NS);
      if (cached && cached.metadata.labels.tier === 'gold') return;
      await new Promise((r) => setTimeout(r, 100));
    }
  })(), 20000, 'informer cache sees the patch');
  await core.deleteNamespacedPod({ name: 'js-1', namespace: NS });
  await withTimeout(finished, 20000, 'informer delete event');
  stopping = true;
  await informer.stop();
  check(seen[0] === 'add' && seen.includes('update') && seen[seen.length - 1] === 'delete',
    `informer saw ${seen.join(', ')}`);
}

async function testCustomObjects() {
  const group = 'scheduling.k8s.io';
  const version = 'v1alpha3';
  await custom.createNamespacedCustomObject({
    group, version, namespace: NS, plural: 'podgroups',
    body: {
      apiVersion: `${group}/${version}`, kind: 'PodGroup', metadata: { name: 'js-pg' },
      spec: { workloadRef: { workloadName: 'w', templateName: 'pg' },
        schedulingPolicy: { gang: { minCount: 1 } } },
    },
  });
  const out = await custom.patchNamespacedCustomObject({
    group, version, namespace: NS, plural: 'podgroups', name: 'js-pg',
    body: { spec: { schedulingPolicy: { gang: { minCount: 2 } } } },
  }, merge);
  check(out.spec.schedulingPolicy.gang.minCount === 2, 'merge patch of a PodGroup');
  const all = await custom.listNamespacedCustomObject({ group, version, namespace: NS, plural: 'podgroups' });
  check(all.items.some((g) => g.metadata.name === 'js-pg'), 'listNamespacedCustomObject');
}

// The client's V1PodSpec model predates spec.schedulingGroup: the serializer
// drops the field, so the pod arrives without it.  The group label keeps it
// in its gang: the server's Table shows the group the scheduler reads.
async function testGroupLabel() {
  const body = pod('js-grouped');
  body.metadata.labels['scheduling.podkernel.dev/pod-group'] = 'js-pg';
  body.spec.schedulingGroup = { podGroupName: 'js-pg' };
  const created = await core.createNamespacedPod({ namespace: NS, body });
  check(created.spec.schedulingGroup === undefined, 'the typed client dropped spec.schedulingGroup');
  const res = await fetch(`${url}/api/v1/namespaces/${NS}/pods/js-grouped`, {
    headers: { Authorization: `Bearer ${token}`,
      Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
  });
  const table = await res.json();
  const col = table.columnDefinitions.findIndex((c) => c.name === 'Group');
  check(col >= 0 && table.rows[0].cells[col] === 'js-pg', 'the label keeps the pod in its PodGroup');
}

try {
  await testVersion();
  await testInformer();
  await testCustomObjects();
  await testGroupLabel();
  console.log('js client: ok');
  process.exit(0);
} catch (err) {
  console.error(`FAIL: ${err.stack || err}`);
  if (err.body) console.error(err.body);
  process.exit(1);
}
