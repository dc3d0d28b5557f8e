/**
 * The environment a job host is forked with: only what its trusted part needs — the Kafka settings (its tenant's
 * credentials come over IPC), the bucket's name, and what Node and the system need to run — never the worker's
 * whole environment. A job host runs a tenant's code in its own process, and that code can read `process.env`: the
 * control plane's and the worker's secrets (Postgres and Redis URLs with their passwords, the admin token, the S3
 * credentials) must not be there. Its object store is the worker's (blob-broker/): it needs no S3 settings.
 *
 * An allow-list, not a deny-list: a secret the worker gains later is left out until someone decides a job host
 * needs it.
 */
const KEPT_NAMES = new Set([
  'PATH',
  'HOME',
  'TMPDIR',
  'TZ',
  'LANG',
  'LC_ALL',
  'NODE_ENV',
  'NODE_OPTIONS',
  'NODE_PATH',
  'UV_THREADPOOL_SIZE',
  'WEIR_LOG_LEVEL',
  'WEIR_KAFKA_BROKERS',
  'WEIR_KAFKA_CLIENT_ID',
  'WEIR_S3_BUCKET',
]);

export function jobHostEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && KEPT_NAMES.has(name)) kept[name] = value;
  return kept;
}
