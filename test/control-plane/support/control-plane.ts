import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { loadConfig, type WeirConfig } from '@weir/config';
import { Redis } from 'ioredis';
import pino from 'pino';
import { Pool } from 'pg';
import { createApp } from '../../../apps/control-plane/src/app';
import type { ControlPlaneOptions } from '../../../apps/control-plane/src/control-plane-options';

/** A queue prefix of its own per test file, so that parallel runs and leftovers never meet. */
export function uniquePrefix(): string {
  return `weir-test-${randomBytes(4).toString('hex')}`;
}

export const TEST_ADMIN_TOKEN = `test-admin-${randomBytes(16).toString('hex')}`;

export function testConfig(overrides: Record<string, string> = {}): WeirConfig {
  return loadConfig({ ...process.env, WEIR_LOG_LEVEL: 'warn', WEIR_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...overrides });
}

/** Headers of a platform administrator (the admin-only routes: tenants, the worker fleet). */
export function adminHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...extra };
}

export interface RunningControlPlane {
  readonly app: INestApplication;
  readonly url: string;
  close(): Promise<void>;
}

/** Boots the control plane on a random loopback port. */
export async function startControlPlane(
  config: WeirConfig,
  options: Omit<ControlPlaneOptions, 'config'> = {},
): Promise<RunningControlPlane> {
  const app = await createApp({ config, ...options });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** A port nothing listens on: bound once to get a free number, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Removes every Redis key under a test's queue prefix. */
export async function deleteQueues(config: WeirConfig): Promise<void> {
  const redis = new Redis(config.WEIR_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.WEIR_QUEUE_PREFIX}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export async function deleteWorkers(config: WeirConfig, ids: readonly string[]): Promise<void> {
  const pool = new Pool({ connectionString: config.WEIR_PG_URL, max: 1 });
  try {
    await pool.query('DELETE FROM workers WHERE id = ANY($1)', [ids]);
  } finally {
    await pool.end();
  }
}

/** A log destination whose JSON lines the test can read back. */
export function capturingLog(): { destination: pino.DestinationStream; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  return {
    destination: { write: (line: string) => void raw.push(line) },
    lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Polls until `probe` returns a value, or fails with the last value seen. Conditions, never durations. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 20_000, everyMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
}

/** Response bodies as the tests read them. */
export interface WorkerBody {
  id: string;
  status: string;
  slots: number;
  version: string;
  pid: number;
  heartbeatMs: number;
  lastSeenAt: string;
  statusChangedAt: string;
  runningSubtasks: unknown[];
}
export interface PageBody<T> {
  items: T[];
  nextCursor: string | null;
}
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  requestId: string;
  errors?: { in: string; name: string; reason: string }[];
}
export interface HealthBody {
  status: string;
  info: Record<string, { status: string; message?: string }>;
  error: Record<string, { status: string; message?: string }>;
  details: Record<string, { status: string; message?: string }>;
}

export async function readJson<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}
