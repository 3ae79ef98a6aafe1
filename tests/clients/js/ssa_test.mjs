// Server-side apply through the official JavaScript client
// (@kubernetes/client-node): KubernetesObjectApi.patch with
// PatchStrategy.ServerSideApply creates a pod, a second manager's different
// image is a 409 conflict naming the first manager and the field, and with
// force the second manager takes the field over (managedFields say so).
//
// Usage: node ssa_test.mjs URL ADMIN_TOKEN; exits non-zero on a failed
// expectation.
import * as k8s from '@kubernetes/client-node';

const [url, token] = process.argv.slice(2);

function check(cond, what) {
  if (!cond) {
    console.error(`FAIL: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'pk', server: url, skipTLSVerify: true }],
  users: [{ name: 'u', token }],
  contexts: [{ name: 'pk', cluster: 'pk', user: 'u', namespace: 'default' }],
  currentContext: 'pk',
});
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
const SSA = k8s.PatchStrategy.ServerSideApply;
const pod = (image, labels) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'js-ssa', namespace: 'default', labels },
  spec: { containers: [{ name: 'c', image }] },
});

const created = await objects.patch(pod('one', { app: 'a', tier: 'web' }), undefined, undefined,
  'js-deployer', false, SSA);
check(created.spec.containers[0].image === 'one', 'apply creates the pod');
const mf = created.metadata.managedFields;
check(mf.length === 1 && mf[0].manager === 'js-deployer' && mf[0].operation === 'Apply',
  'managedFields: one Apply entry for js-deployer');
check('f:image' in mf[0].fieldsV1['f:spec']['f:containers']['k:{"name":"c"}'],
  'the entry owns the container image');

// The same manager drops a label it applied before: it goes.
const again = await objects.patch(pod('one', { app: 'a' }), undefined, undefined, 'js-deployer',
  false, SSA);
check(again.metadata.labels.tier === undefined && again.metadata.labels.app === 'a',
  'a field left out of the next apply is removed');

let conflict = null;
try {
  await objects.patch(pod('two', { app: 'a' }), undefined, undefined, 'js-other', false, SSA);
} catch (e) {
  conflict = e;
}
check(conflict && conflict.code === 409, 'another manager changing the image: 409');
const status = typeof conflict.body === 'string' ? JSON.parse(conflict.body) : conflict.body;
check(status.reason === 'Conflict' &&
  status.details.causes[0].reason === 'FieldManagerConflict' &&
  status.details.causes[0].field === '.spec.containers[name="c"].image' &&
  status.message.includes('conflict with "js-deployer"'),
  `the conflict names the manager and the field: ${status.message}`);

const forced = await objects.patch(pod('two', { app: 'a' }), undefined, undefined, 'js-other',
  true, SSA);
check(forced.spec.containers[0].image === 'two', 'force applies the image');
const owners = forced.metadata.managedFields.filter(
  (m) => 'f:image' in (m.fieldsV1['f:spec']?.['f:containers']?.['k:{"name":"c"}'] ?? {}));
check(owners.length === 1 && owners[0].manager === 'js-other', 'the image moved to js-other');
