import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closedPort,
  deleteQueues,
  readJson,
  startControlPlane,
  testConfig,
  uniquePrefix,
  type HealthBody,
  type RunningControlPlane,
} from './support/control-plane';

describe('control plane health', () => {
  describe('with every dependency up', () => {
    const config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix() });
    let cp: RunningControlPlane;
    beforeAll(async () => {
      cp = await startControlPlane(config);
    });
    afterAll(async () => {
      await cp?.close();
      await deleteQueues(config);
    });

    it('GET /health answers while the process is up', async () => {
      const res = await fetch(`${cp.url}/health`);
      expect(res.status).toBe(200);
      expect(await readJson<HealthBody>(res)).toMatchObject({ status: 'ok' });
    });

    it('GET /health/ready is 200 with Postgres, Redis, Kafka and S3 up', async () => {
      const res = await fetch(`${cp.url}/health/ready`);
      const body = await readJson<HealthBody>(res);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.status).toBe('ok');
      for (const dependency of ['postgres', 'redis', 'kafka', 's3']) {
        expect(body.details[dependency], dependency).toMatchObject({ status: 'up' });
      }
    });

    it('echoes a caller-given request id and makes one up otherwise', async () => {
      const given = await fetch(`${cp.url}/health`, { headers: { 'X-Request-Id': 'trace-abc.123' } });
      expect(given.headers.get('x-request-id')).toBe('trace-abc.123');
      const made = await fetch(`${cp.url}/health`, { headers: { 'X-Request-Id': 'bad id with spaces' } });
      expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('with S3 unreachable', () => {
    let config: ReturnType<typeof testConfig>;
    let cp: RunningControlPlane;
    beforeAll(async () => {
      config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_S3_ENDPOINT: `http://127.0.0.1:${await closedPort()}` });
      cp = await startControlPlane(config, { healthCheckTimeoutMs: 3_000 });
    });
    afterAll(async () => {
      await cp?.close();
      await deleteQueues(config);
    });

    it('GET /health/ready is 503 and names S3 as down with a reason', async () => {
      const res = await fetch(`${cp.url}/health/ready`);
      expect(res.status).toBe(503);
      const body = await readJson<HealthBody>(res);
      expect(body.status).toBe('error');
      expect(Object.keys(body.error)).toEqual(['s3']);
      expect(body.error.s3.status).toBe('down');
      expect(body.error.s3.message).toMatch(/ECONNREFUSED|connect|timeout/i);
      for (const dependency of ['postgres', 'redis', 'kafka']) expect(body.info[dependency].status).toBe('up');
    });

    it('keeps liveness at 200: a dependency outage is not a reason to restart', async () => {
      expect((await fetch(`${cp.url}/health`)).status).toBe(200);
    });
  });
});

describe('control plane health with Kafka unreachable', () => {
  let config: ReturnType<typeof testConfig>;
  let cp: RunningControlPlane;
  beforeAll(async () => {
    config = testConfig({ WEIR_QUEUE_PREFIX: uniquePrefix(), WEIR_KAFKA_BROKERS: `127.0.0.1:${await closedPort()}` });
    cp = await startControlPlane(config, { healthCheckTimeoutMs: 3_000 });
  });
  afterAll(async () => {
    await cp?.close();
    await deleteQueues(config);
  });

  it('GET /health/ready is 503 and names Kafka as down', async () => {
    const res = await fetch(`${cp.url}/health/ready`);
    expect(res.status).toBe(503);
    const body = await readJson<HealthBody>(res);
    expect(Object.keys(body.error)).toEqual(['kafka']);
    expect(body.error.kafka.message).toMatch(/Kafka did not answer/);
  });
});
