import v8 from 'node:v8';
import { restrictDns } from './dns-guard';
import { outboundOf, restrictOutbound } from './outbound-guard';

/** Variables the trusted part has read by now (loadConfig), which tenant code must not find in process.env. */
const CREDENTIALS = /^(WEIR_S3_|WEIR_KAFKA_|AWS_)/;

/** A job host's introspection tenant code may not use: it would read the trusted part's memory (credentials). */
export class IntrospectionDeniedError extends Error {
  override readonly name = 'IntrospectionDeniedError';
  readonly code = 'ERR_ACCESS_DENIED';
}

/**
 * What a job host does after it has read its config and before the first line of tenant code runs, to close what
 * Node 20's permission model leaves open in the same process:
 * - network: TCP only to its Kafka brokers (the tenant's listener), no UDP (outbound-guard.ts); its object store
 *   is the worker's (blob-broker/), which holds the S3 credentials; DNS for its brokers' names only (dns-guard.ts);
 * - the credentials: gone from process.env (the config object that holds them is not reachable from a bundle);
 * - memory: v8's heap snapshots (which would write every string of the process, the credentials too, to a file the
 *   job host may read) and V8 flags (`--allow-natives-syntax`) throw.
 * Each replacement is non-writable and non-configurable: tenant code cannot put the original back.
 */
export function hardenBeforeTenantCode(kafkaBrokers: readonly string[]): void {
  const outbound = outboundOf(kafkaBrokers);
  restrictOutbound(outbound);
  restrictDns(outbound.map((e) => e.host));
  for (const name of Object.keys(process.env)) if (CREDENTIALS.test(name)) delete process.env[name];
  for (const method of ['writeHeapSnapshot', 'getHeapSnapshot', 'setFlagsFromString'] as const) {
    Object.defineProperty(v8, method, {
      value: () => {
        throw new IntrospectionDeniedError(`v8.${method} is not available to a job: it would expose the job host's memory`);
      },
      writable: false,
      configurable: false,
    });
  }
}
