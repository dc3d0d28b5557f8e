/**
 * The savepoints REST API against a real control plane and worker: trigger (asynchronous, a retried trigger id
 * takes no second savepoint), status, list, the restore dry run against a bundle whose operator ids changed,
 * dispose, and stop-with-savepoint.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildJob, insertBundle, waitForStatus, wordCountSource, type Api } from '../control-plane/deployments/support';
import { eventually } from '../control-plane/support/control-plane';
import { platformFixture } from '../support/platform';

describe('savepoints API', () => {
  const platform = platformFixture({ name: 'sp-api', topics: { input: 'words', output: 'counts' } });
  const { run } = platform;
  let client: Api;
  let topics: { input: string; output: string };
  let v1: string;
  let v2: string;
  let deploymentId: string;

  beforeAll(async () => {
    ({ client, topics } = platform);
    const { config, home, tenant } = platform;
    const job = await buildJob(home, wordCountSource(topics.input, topics.output));
    v1 = await insertBundle(config, tenant.tenantId, job, { version: '1.0.0', topics: [topics.input, topics.output] });
    // v2 renamed the window operator: the savepoint's window state has no owner there.
    const renamed = await buildJob(home, wordCountSource(topics.input, topics.output).replace("window('counts'", "window('counts-v2'"));
    v2 = await insertBundle(config, tenant.tenantId, renamed, {
      version: '2.0.0',
      operatorIds: ['words', 'by-word', 'counts-v2', 'out'],
      topics: [topics.input, topics.output],
    });
  });

  const completed = (savepointId: string) =>
    eventually(`savepoint ${savepointId}`, async () => {
      const res = await client.get(`/v1/deployments/${deploymentId}/savepoints/${savepointId}`);
      if (res.body?.state === 'FAILED') throw new Error(`savepoint failed: ${res.body.failureReason}`);
      return res.status === 200 && res.body.state === 'COMPLETED' ? res.body : undefined;
    }, { timeoutMs: 30_000, everyMs: 100 });

  it('trigger, retry, status, list, dry run, dispose', async () => {
    const created = await client.post('/v1/deployments', {
      name: 'word-count',
      bundleId: v1,
      parallelism: { default: 1, operators: { counts: 2 } },
      config: { topics: { words: topics.input, counts: topics.output }, properties: { 'checkpoint.interval-ms': '500' } },
    }, { 'idempotency-key': `sp-${run}` });
    expect(created.status).toBe(201);
    deploymentId = created.body.id as string;
    platform.track(deploymentId);
    await waitForStatus(client, deploymentId, 'RUNNING');

    const triggered = await client.post(`/v1/deployments/${deploymentId}/savepoints`, { savepointId: 'sp-a' });
    expect(triggered.status).toBe(202);
    expect(['PENDING', 'COMPLETED']).toContain(triggered.body.state);
    const done = await completed('sp-a');
    expect(done.savepoint.operators).toEqual(expect.arrayContaining(['words', 'counts']));

    const retried = await client.post(`/v1/deployments/${deploymentId}/savepoints`, { savepointId: 'sp-a' });
    expect(retried.status).toBe(202);
    expect(retried.body.state).toBe('COMPLETED');
    expect(retried.body.savepoint.checkpointId).toBe(done.savepoint.checkpointId);
    const list = await client.get(`/v1/deployments/${deploymentId}/savepoints`);
    expect(list.body.items.map((s: { savepointId: string }) => s.savepointId)).toEqual(['sp-a']);

    const same = await client.post(`/v1/deployments/${deploymentId}/savepoints/sp-a/restore-check`, { bundleId: v1 });
    expect(same.body).toMatchObject({ ok: true, dropped: [], unreadable: [] });
    const changed = await client.post(`/v1/deployments/${deploymentId}/savepoints/sp-a/restore-check`, { bundleId: v2 });
    expect(changed.status).toBe(200);
    expect(changed.body.ok).toBe(false);
    expect(changed.body.dropped).toEqual(['counts']);
    expect(changed.body.explanation).toContain('operator "counts" has state in the savepoint but not in the bundle');

    expect((await client.call('DELETE', `/v1/deployments/${deploymentId}/savepoints/sp-a`)).status).toBe(204);
    const gone = await client.get(`/v1/deployments/${deploymentId}/savepoints/sp-a`);
    expect(gone.status).toBe(404);
    expect(gone.headers.get('content-type')).toContain('application/problem+json');
  });

  it('stop-with-savepoint suspends the deployment after the savepoint; a trigger then is refused', async () => {
    const res = await client.post(`/v1/deployments/${deploymentId}/savepoints`, { savepointId: 'sp-stop', stop: true });
    expect(res.status).toBe(202);
    await completed('sp-stop');
    await waitForStatus(client, deploymentId, 'SUSPENDED');
    const refused = await client.post(`/v1/deployments/${deploymentId}/savepoints`, { savepointId: 'sp-late' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/SUSPENDED|STOPPING/);
  });

  it('restore into a bundle whose operator ids changed: refused with the explanation, then allowed at another parallelism', async () => {
    const refused = await client.post(`/v1/deployments/${deploymentId}/savepoints/sp-stop/restore`, { bundleId: v2 });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('operator "counts" has state in the savepoint but not in the bundle');
    expect(refused.body.detail).toContain('allowNonRestoredState');
    expect((await client.get(`/v1/deployments/${deploymentId}`)).body.status).toBe('SUSPENDED');

    const restored = await client.post(`/v1/deployments/${deploymentId}/savepoints/sp-stop/restore`, {
      bundleId: v2,
      parallelism: { default: 1, operators: { 'counts-v2': 3 } },
      allowNonRestoredState: true,
    });
    expect(restored.status).toBe(202);
    const running = await waitForStatus(client, deploymentId, 'RUNNING');
    expect(running.bundleId).toBe(v2);
    const history = await client.get(`/v1/deployments/${deploymentId}/history`);
    const latest = history.body.runs[0];
    expect(latest.restoreFrom).toMatchObject({ snapshotId: 'sp-stop', allowNonRestoredState: true });
    expect(latest.subtasks.filter((s: { operatorId: string }) => s.operatorId === 'counts-v2')).toHaveLength(3);
  });
});
