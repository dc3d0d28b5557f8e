import { randomBytes } from 'node:crypto';
import type { WeirConfig } from '@weir/config';
import { createPool, withTenant } from '@weir/db';
import { LatencyRecorder, type SubtaskMetricsSnapshot } from '@weir/metrics';
import { createClient, type Client, type ExecutionResult } from 'graphql-ws';
import { Redis } from 'ioredis';
import WebSocket from 'ws';

/** POSTs one GraphQL operation with a bearer key (or none). */
export async function gql<T = Record<string, unknown>>(
  url: string,
  key: string | undefined,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ status: number; body: ExecutionResult<T> & { errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

export interface WsConnection {
  readonly client: Client;
  /** Resolves with the close code once the server closes the socket. */
  readonly closed: Promise<number>;
  /** Resolves once the server acknowledged connection_init. */
  readonly connected: Promise<void>;
}

export function connectWs(url: string, authorization: string | undefined): WsConnection {
  let onClosed!: (code: number) => void;
  let onConnected!: () => void;
  const closed = new Promise<number>((resolve) => (onClosed = resolve));
  const connected = new Promise<void>((resolve) => (onConnected = resolve));
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: authorization === undefined ? {} : { authorization },
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => undefined,
    on: {
      connected: () => onConnected(),
      closed: (event) => onClosed((event as { code: number }).code),
    },
  });
  return { client, closed, connected };
}

/** Collects what one subscription delivers. */
export interface Collector<T> {
  readonly items: T[];
  readonly errors: unknown[];
  /** Resolves when the server has confirmed the subscription (its first message or error), see `subscribed`. */
  next(): Promise<T>;
  dispose(): void;
}

export function collect<T>(client: Client, query: string, variables: Record<string, unknown>): Collector<T> {
  const items: T[] = [];
  const errors: unknown[] = [];
  const waiters: ((item: T) => void)[] = [];
  const dispose = client.subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) {
          const item = result.data as T;
          items.push(item);
          waiters.shift()?.(item);
        }
      },
      error: (err) => errors.push(err),
      complete: () => undefined,
    },
  );
  let consumed = 0;
  return {
    items,
    errors,
    dispose,
    next: () =>
      consumed < items.length
        ? Promise.resolve(items[consumed++])
        : new Promise<T>((resolve) =>
            waiters.push((item) => {
              consumed++;
              resolve(item);
            }),
          ),
  };
}

/** A real snapshot: a latency histogram holding `latenciesMs`, encoded as workers encode it. */
export function snapshotOf(tenantId: string, jobId: string, fields: Partial<SubtaskMetricsSnapshot> & { latenciesMs?: number[] } = {}): SubtaskMetricsSnapshot {
  const { latenciesMs = [], ...rest } = fields;
  const recorder = new LatencyRecorder();
  for (const ms of latenciesMs) recorder.record(ms);
  const encoded = recorder.encode();
  recorder.destroy();
  const now = Date.now();
  return {
    tenantId,
    jobId,
    operatorId: 'window',
    subtask: 0,
    fromMs: now - 1000,
    toMs: now,
    recordsIn: 1000,
    recordsOut: 900,
    recordsInPerSec: 1000,
    recordsOutPerSec: 900,
    busyMsPerSec: 400,
    backpressuredMsPerSec: 100,
    idleMsPerSec: 500,
    eventTimeLatency: encoded,
    processingLatency: encoded,
    keyGroupCounts: { 3: 600, 7: 400 },
    heavyKeys: [{ key: 'user-1', keyGroup: 3, count: 500, error: 0 }],
    watermarkLagMs: 250,
    deadLettered: 0,
    sourceBacklog: null,
    ...rest,
  };
}

/**
 * A suspended deployment row (and the bundle row it references), written as the application role through RLS: the
 * resolvers only need it to exist; nothing dispatches it (SUSPENDED, never due for the reconciler).
 */
export async function insertDeployment(config: WeirConfig, tenantId: string, id: string): Promise<{ bundleId: string }> {
  const [bundleId] = await insertDeployments(config, tenantId, [id]);
  return { bundleId };
}

/** insertDeployment for many, over one connection; the bundle ids in the order of `ids`. */
export async function insertDeployments(config: WeirConfig, tenantId: string, ids: readonly string[]): Promise<string[]> {
  const pool = createPool({ connectionString: config.WEIR_PG_URL, max: 1, applicationName: 'weir-test-graphql' });
  const bundleIds = ids.map(() => `b${randomBytes(12).toString('hex')}`);
  try {
    await withTenant(pool, tenantId, async (client) => {
      for (const [i, id] of ids.entries()) {
        const bundleId = bundleIds[i];
        const name = `bundle-${bundleId.slice(1, 9)}`;
        await client.query(
          `INSERT INTO bundles (id, tenant_id, name, version, sha256, size_bytes, s3_key, manifest)
           VALUES ($1, $2, $3, '1.0.0', $4, 0, $5, $6)`,
          [
            bundleId,
            tenantId,
            name,
            '0'.repeat(64),
            `tenants/${tenantId}/bundles/${name}/1.0.0/${'0'.repeat(64)}.js`,
            { name, version: '1.0.0', entryPoint: 'job.js', operatorIds: ['window'], rulesSchema: { type: 'object' }, defaultParallelism: 1, maxParallelism: 128 },
          ],
        );
        await client.query(
          `INSERT INTO deployments (tenant_id, id, name, bundle_id, parallelism, desired_state, next_reconcile_at)
           VALUES ($1, $2, $3, $4, '{"default": 1, "operators": {}}', 'SUSPENDED', NULL)`,
          [tenantId, id, `d-${id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 60), bundleId],
        );
      }
    });
  } finally {
    await pool.end();
  }
  return bundleIds;
}

/**
 * A finished run of a deployment with `count` FAILED key-group moves and `count` DECLINED partitioner decisions on
 * it, so their lists have something to page through (written as the reconciler and the partitioner would).
 */
export async function insertRunHistory(config: WeirConfig, tenantId: string, deploymentId: string, bundleId: string, count: number): Promise<void> {
  const pool = createPool({ connectionString: config.WEIR_PG_URL, max: 1, applicationName: 'weir-test-graphql' });
  try {
    await withTenant(pool, tenantId, async (client) => {
      await client.query(
        `INSERT INTO deployment_runs (tenant_id, deployment_id, run_no, worker_id, bundle_id, subtasks, slots, started_reason, ended_at, outcome)
         VALUES ($1, $2, 1, 'test-worker', $3, '[]', 1, 'test', now(), 'STOPPED')`,
        [tenantId, deploymentId, bundleId],
      );
      for (let i = 0; i < count; i++) {
        const at = (Date.now() + i).toString(16).padStart(12, '0');
        await client.query(
          `INSERT INTO deployment_key_group_moves (tenant_id, deployment_id, move_id, run_no, operator_id, moves, requested_by, state, failure, finished_at)
           VALUES ($1, $2, $3, 1, 'window', '[]', 'test', 'FAILED', 'the run ended', now())`,
          [tenantId, deploymentId, `m${at}${randomBytes(6).toString('hex')}`],
        );
        await client.query(
          `INSERT INTO deployment_scaling_decisions (tenant_id, deployment_id, decision_id, run_no, source, operator_id, mode, kind, reason,
             imbalance_before, imbalance_after, unfinished, detection, decision, inputs)
           VALUES ($1, $2, $3, 1, 'partitioner', 'window', 'recommend', 'DECLINED', 'balanced enough', 1, 1, false,
             '{"overloadedSubtasks": [], "hotKeys": []}', '{"moves": [], "declined": [], "loadsBefore": [], "loadsAfter": [], "fairLoads": []}', '{}')`,
          [tenantId, deploymentId, `s${at}${randomBytes(6).toString('hex')}`],
        );
      }
    });
  } finally {
    await pool.end();
  }
}

/** Removes the `weir:<prefix>:*` keys (metrics, SLO minutes) a test run left. */
export async function deleteEventKeys(config: WeirConfig): Promise<void> {
  const redis = new Redis(config.WEIR_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `weir:${config.WEIR_QUEUE_PREFIX}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
