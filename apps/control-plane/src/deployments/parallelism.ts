import type { InvalidParameter } from '../problems/problem-details';
import type { DeployableBundle } from './bundle-reader';
import type { Parallelism } from './deployment';
import type { ParallelismInput } from './dto/deployment-input';

/**
 * Resolves requested parallelism against a bundle: unnamed operators run at `default` (the manifest's
 * defaultParallelism unless given); every named operator must exist, and nothing may exceed maxParallelism.
 */
export function resolveParallelism(
  input: ParallelismInput | undefined,
  bundle: DeployableBundle,
  field: string,
  base?: Parallelism,
): { parallelism: Parallelism; errors: InvalidParameter[] } {
  const errors: InvalidParameter[] = [];
  const known = new Set(bundle.operatorIds);
  const fallbackDefault = base?.default ?? bundle.defaultParallelism;
  const inherited = Object.fromEntries(Object.entries(base?.operators ?? {}).filter(([id]) => known.has(id)));
  const parallelism: Parallelism = input
    ? { default: input.default ?? fallbackDefault, operators: { ...inherited, ...(input.operators ?? {}) } }
    : { default: fallbackDefault, operators: inherited };
  const max = bundle.maxParallelism;
  const tooHigh = `exceeds the bundle's maxParallelism ${max}`;
  if (parallelism.default > max) errors.push({ in: 'body', name: `${field}.default`, reason: tooHigh });
  for (const [id, p] of Object.entries(input?.operators ?? {})) {
    if (!known.has(id)) {
      errors.push({ in: 'body', name: `${field}.operators.${id}`, reason: `is not an operator of bundle ${bundle.name}@${bundle.version} (operators: ${bundle.operatorIds.join(', ')})` });
    } else if (p > max) {
      errors.push({ in: 'body', name: `${field}.operators.${id}`, reason: tooHigh });
    }
  }
  return { parallelism, errors };
}

/** Operator ids as the worker protocol carries them (resourceId); manifests allow more ("." and up to 128). */
const DISPATCHABLE_OPERATOR_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Operators a run-subtasks command could not name: refused at deploy time rather than failing at dispatch. */
export function undispatchableOperators(bundle: DeployableBundle, field: string): InvalidParameter[] {
  const bad = bundle.operatorIds.filter((id) => !DISPATCHABLE_OPERATOR_ID.test(id));
  if (!bad.length) return [];
  return [{ in: 'body', name: field, reason: `operator ids ${bad.map((id) => JSON.stringify(id)).join(', ')} cannot be dispatched to workers (1-64 of A-Z, a-z, 0-9, "_", "-")` }];
}
