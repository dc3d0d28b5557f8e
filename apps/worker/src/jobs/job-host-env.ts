/**
 * The environment a job host is forked with: only what its trusted part needs — Kafka and S3, where it does the
 * job's I/O, and what Node and the system need to run — never the worker's whole environment. A job host runs a
 * tenant's code in its own process, and that code can read `process.env`: the control plane's and the worker's
 * secrets (Postgres and Redis URLs with their passwords, the admin token, the queue prefix) must not be there.
 *
 * An allow-list, not a deny-list: a secret the worker gains later is left out until someone decides a job host
 * needs it. The S3 and Kafka settings are still readable by tenant code in the same process; moving user code behind
 * an isolate (issue 16) is what takes those out of its reach.
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
  'WEIR_S3_ENDPOINT',
  'WEIR_S3_REGION',
  'WEIR_S3_BUCKET',
  'WEIR_S3_ACCESS_KEY_ID',
  'WEIR_S3_SECRET_ACCESS_KEY',
  'WEIR_S3_FORCE_PATH_STYLE',
]);

/** The AWS SDK's own settings (region, profile, a role's web identity) for `WEIR_S3_ENDPOINT=aws`. */
const KEPT_PREFIXES = ['AWS_'];

export function jobHostEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (KEPT_NAMES.has(name) || KEPT_PREFIXES.some((p) => name.startsWith(p)))) kept[name] = value;
  }
  return kept;
}
