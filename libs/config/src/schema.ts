import { hostname } from 'node:os';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');
const port = z.coerce.number().int().min(1).max(65535);
const limit = z.coerce.number({ error: 'expected a positive whole number' }).int('expected a positive whole number').positive('expected a positive whole number');
const RATE = 'expected a whole number of requests, 0 for off';
const rate = z.coerce.number({ error: RATE }).int(RATE).min(0, RATE);
const BYTES = 'expected a positive whole number of bytes (2147483648 is 2 GiB)';

/**
 * Every setting Weir reads from the environment, with its default. `.env.example` documents the same list;
 * a test keeps the two in step.
 */
export const configSchema = z.object({
  WEIR_HOME: z.string().default('.weir'),
  WEIR_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),

  WEIR_PG_URL: z.url().default('postgres://weir_app:weir_app@127.0.0.1:5432/weir'),
  WEIR_PG_OWNER_URL: z.url().default('postgres://weir_owner:weir_owner@127.0.0.1:5432/weir'),
  WEIR_PG_ADMIN_URL: z.url().default('postgres://postgres@127.0.0.1:5432/postgres'),

  WEIR_REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  WEIR_QUEUE_PREFIX: z.string().regex(/^[a-z0-9_-]+$/).default('weir'),

  WEIR_KAFKA_BROKERS: z
    .string()
    .default('127.0.0.1:9092')
    .transform((s) => s.split(',').map((b) => b.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[^:]+:\d+$/, 'expected host:port')).min(1)),
  WEIR_KAFKA_CLIENT_ID: z.string().default('weir'),
  // Job hosts' listener, where each authenticates as its tenant and ACLs apply (apps/worker/src/kafka-access);
  // `off` (null once parsed): job hosts use WEIR_KAFKA_BROKERS as the platform does.
  WEIR_KAFKA_TENANT_BROKERS: z
    .string()
    .default('127.0.0.1:9094')
    .transform((s) => (s.trim() === 'off' ? null : s.split(',').map((b) => b.trim()).filter(Boolean)))
    .pipe(z.array(z.string().regex(/^[^:]+:\d+$/, 'expected host:port, or off')).min(1).nullable()),
  WEIR_KAFKA_TENANT_SECRET: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -base64 32)').optional(),

  // `aws` (null once parsed) means no custom endpoint: the AWS SDK's own, per region.
  WEIR_S3_ENDPOINT: z
    .union([z.literal('aws').transform(() => null), z.url()])
    .default('http://127.0.0.1:4568'),
  WEIR_S3_REGION: z.string().default('us-east-1'),
  WEIR_S3_BUCKET: z.string().regex(/^[a-z0-9.-]{3,63}$/).default('weir'),
  WEIR_S3_ACCESS_KEY_ID: z.string().default('S3RVER'),
  WEIR_S3_SECRET_ACCESS_KEY: z.string().default('S3RVER'),
  WEIR_S3_FORCE_PATH_STYLE: bool.default(true),

  WEIR_HTTP_HOST: z.string().default('127.0.0.1'),
  WEIR_HTTP_PORT: port.default(8080),
  WEIR_CONTROL_PLANE_URL: z.url().default('http://127.0.0.1:8080'),
  // Platform administration over HTTP (creating tenants, their first keys); disabled when unset.
  WEIR_ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -base64 32)').optional(),
  // What one GraphQL operation may ask for (apps/control-plane/src/graphql/graphql-limits.ts, docs/graphql.md
  // "Limits"); over a limit it is refused before anything runs.
  WEIR_GRAPHQL_MAX_TOKENS: limit.default(2000),
  WEIR_GRAPHQL_MAX_DEPTH: limit.default(10),
  WEIR_GRAPHQL_MAX_ALIASES: limit.default(20),
  WEIR_GRAPHQL_MAX_DIRECTIVES: limit.default(20),
  WEIR_GRAPHQL_MAX_COST: limit.default(1000),
  // Requests per second an API key, and all of a tenant's keys together, may make to the REST and GraphQL HTTP API,
  // counted in Redis so they hold across control-plane instances (apps/control-plane/src/rate-limits, docs/tenancy.md
  // "Rate limits"); the burst is how many more each may make within a 10-second window. 0: that limit is off.
  // Generous by default (the API bench sends 1,000 requests/s with one key): set them to what your tenants need.
  WEIR_RATE_LIMIT_KEY_PER_SEC: rate.default(1000),
  WEIR_RATE_LIMIT_KEY_BURST: rate.default(2000),
  WEIR_RATE_LIMIT_TENANT_PER_SEC: rate.default(2000),
  WEIR_RATE_LIMIT_TENANT_BURST: rate.default(4000),

  WEIR_WORKER_ID: z.string().regex(/^[A-Za-z0-9._-]+$/).default(`${hostname()}-${process.pid}`),
  WEIR_WORKER_SLOTS: z.coerce.number().int().min(1).max(256).default(4),
  // Job hosts kept forked and loaded ahead of need, so a joiner or a restored run starts without loading Node modules.
  WEIR_WORKER_WARM_JOB_HOSTS: z.coerce.number().int().min(0).max(16).default(1),
  WEIR_WORKER_HEARTBEAT_MS: z.coerce.number().int().min(100).default(2000),
  // A job host's V8 heap limit (MiB) and how long its event loop may stay blocked (ms): past either, the job fails.
  WEIR_JOB_HOST_MAX_HEAP_MB: z.coerce.number().int().min(64).max(65_536).default(2048),
  WEIR_JOB_HOST_STALL_TIMEOUT_MS: z.coerce.number().int().min(2_000).max(600_000).default(30_000),
  WEIR_WORKER_METRICS_PORT: port.optional(),
  // Disk the worker's downloaded job bundles may use; the least recently used are deleted past it.
  WEIR_WORKER_BUNDLE_CACHE_BYTES: z.coerce
    .number({ error: BYTES })
    .int(BYTES)
    .positive(BYTES)
    .default(2 * 1024 ** 3),
});

export type WeirConfig = z.infer<typeof configSchema>;
