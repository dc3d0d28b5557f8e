import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminHeaders,
  capturingLog,
  closedPort,
  deleteQueues,
  readJson,
  startControlPlane,
  testConfig,
  uniquePrefix,
  type ProblemBody,
  type RunningControlPlane,
} from './support/control-plane';

/** What a caller sees, and what the server logs, when a request fails for reasons that are not the caller's. */
describe('unexpected failures', () => {
  describe('Postgres unreachable', () => {
    const log = capturingLog();
    let config: ReturnType<typeof testConfig>;
    let cp: RunningControlPlane;
    beforeAll(async () => {
      config = testConfig({
        WEIR_QUEUE_PREFIX: uniquePrefix(),
        WEIR_PG_URL: `postgres://weir_app:weir_app@127.0.0.1:${await closedPort()}/weir`,
      });
      cp = await startControlPlane(config, { logDestination: log.destination });
    });
    afterAll(async () => {
      await cp?.close();
      await deleteQueues(config);
    });

    it('answers 503 problem details with a generic message, and logs the cause with the request id', async () => {
      const res = await fetch(`${cp.url}/v1/workers`, { headers: adminHeaders({ 'X-Request-Id': 'pg-down-1' }) });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      const text = await res.text();
      expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|at \w+ \(/);
      expect(JSON.parse(text) as ProblemBody).toMatchObject({ status: 503, type: 'urn:weir:problem:unavailable', requestId: 'pg-down-1' });
      const logged = log.lines().find((l) => l.requestId === 'pg-down-1' && l.msg === 'request failed unexpectedly');
      expect(logged?.err).toMatchObject({ type: 'DatabaseUnavailableError' });
    });
  });

  describe('Postgres refusing the connection (no such database)', () => {
    const log = capturingLog();
    const config = testConfig({
      WEIR_QUEUE_PREFIX: uniquePrefix(),
      WEIR_PG_URL: 'postgres://weir_app:not-the-password@127.0.0.1:5432/weir_no_such_database',
    });
    let cp: RunningControlPlane;
    beforeAll(async () => {
      cp = await startControlPlane(config, { logDestination: log.destination });
    });
    afterAll(async () => {
      await cp?.close();
      await deleteQueues(config);
    });

    it('answers 500 problem details without a stack or the driver message, and logs both', async () => {
      const res = await fetch(`${cp.url}/v1/workers/some-worker`, { headers: adminHeaders({ 'X-Request-Id': 'pg-auth-1' }) });
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const text = await res.text();
      expect(text).not.toMatch(/password|weir_no_such_database|stack|at \w+ \(/i);
      expect(JSON.parse(text) as ProblemBody).toMatchObject({
        status: 500,
        type: 'urn:weir:problem:internal-error',
        instance: '/v1/workers/some-worker',
        requestId: 'pg-auth-1',
      });
      const logged = log.lines().find((l) => l.requestId === 'pg-auth-1' && l.msg === 'request failed unexpectedly');
      expect(logged?.err).toMatchObject({ type: 'DatabaseError', message: expect.stringContaining('weir_no_such_database') });
      expect(JSON.stringify(log.lines())).not.toContain('not-the-password');
    });

    it('reports Postgres down on /health/ready with the reason', async () => {
      const res = await fetch(`${cp.url}/health/ready`);
      expect(res.status).toBe(503);
      const body = (await readJson<{ error: Record<string, { message: string }> }>(res)).error;
      expect(Object.keys(body)).toEqual(['postgres']);
      expect(body.postgres.message).toMatch(/weir_no_such_database/);
    });
  });
});
