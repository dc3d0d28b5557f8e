import Module from 'node:module';
import * as engine from '@weir/engine';
import { instantiateJob, isParameterizedJob, type JobConfig, type JobDefinition } from '@weir/engine';

export class BundleLoadError extends Error {
  override readonly name = 'BundleLoadError';
}

type ModuleLoad = (request: string, parent: unknown, isMain: boolean) => unknown;

/**
 * Loads a job bundle (a CommonJS file) and returns the job definition it exports, built with the deployment's
 * config when the job is parameterized (a JobParameterError names what the config lacks). The SDK is provided by
 * the host, like Flink's "provided" scope: a bundle's `require('@weir/engine')` gets this process's engine, so its
 * job definition and the runtime share one set of classes.
 */
export function loadBundle(bundlePath: string, config?: JobConfig): JobDefinition {
  const internals = Module as unknown as { _load: ModuleLoad };
  const original = internals._load;
  internals._load = function load(request, parent, isMain) {
    return request === '@weir/engine' ? engine : original.call(this, request, parent, isMain);
  };
  let exported: unknown;
  try {
    // A bundle is CommonJS loaded at run time from a path only known now: require() is the point.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    exported = require(bundlePath);
  } catch (err) {
    throw new BundleLoadError(`the bundle failed to load: ${(err as Error).message}`, { cause: err });
  } finally {
    internals._load = original;
  }
  const candidate = (exported as { default?: unknown }).default ?? exported;
  if (!isJobDefinition(candidate) && !isParameterizedJob(candidate)) {
    throw new BundleLoadError('the bundle must export a job definition (export default defineJob(...))');
  }
  return instantiateJob(candidate, config);
}

function isJobDefinition(value: unknown): value is JobDefinition {
  const v = value as Partial<JobDefinition> | null;
  return !!v && typeof v.name === 'string' && typeof v.maxParallelism === 'number' && Array.isArray(v.nodes);
}
