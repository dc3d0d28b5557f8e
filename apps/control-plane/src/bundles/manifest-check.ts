import type { BundleFacts } from '@weir/sandbox';
import type { InvalidParameter } from '../problems/problem-details';
import type { BundleManifest } from './manifest';

/**
 * Where the manifest disagrees with the bundle's code (its job as loaded in the sandbox): the operator ids name the
 * job's state in every checkpoint, restore check and key-group move, maxParallelism fixes its key groups, and the
 * rules schema (when the job declares one) is what its rules are validated against, so they must be the job's, not
 * what the uploader claims. Each problem says what the job has, to copy.
 */
export function manifestProblems(manifest: BundleManifest, facts: BundleFacts): InvalidParameter[] {
  const problems: InvalidParameter[] = [];
  const listed = new Set(manifest.operatorIds);
  const actual = new Set(facts.operatorIds);
  const extra = manifest.operatorIds.filter((id) => !actual.has(id));
  const missing = facts.operatorIds.filter((id) => !listed.has(id));
  if (extra.length > 0 || missing.length > 0) {
    const wrong = [
      extra.length > 0 ? `lists ${quoted(extra)}, which the job does not have` : '',
      missing.length > 0 ? `leaves out ${quoted(missing)}` : '',
    ].filter(Boolean);
    problems.push({ in: 'body', name: 'manifest.operatorIds', reason: `${wrong.join(' and ')}: the job's operator ids are ${JSON.stringify(facts.operatorIds)}` });
  }
  if (facts.rulesSchema !== null && canonicalJson(manifest.rulesSchema) !== canonicalJson(facts.rulesSchema)) {
    const own = JSON.stringify(facts.rulesSchema);
    problems.push({
      in: 'body',
      name: 'manifest.rulesSchema',
      reason: `is not the rules schema the job declares (rulesSchema() in its definition, built with its properties' defaults), which is ${own.length > 4_000 ? `${own.slice(0, 4_000)}… (${own.length} characters)` : own}`,
    });
  }
  if (manifest.maxParallelism !== facts.maxParallelism) {
    problems.push({
      in: 'body',
      name: 'manifest.maxParallelism',
      reason: `is ${manifest.maxParallelism}, but the job's is ${facts.maxParallelism} (defineJob's maxParallelism, default 128)`,
    });
  }
  return problems;
}

const quoted = (ids: readonly string[]) => ids.map((id) => JSON.stringify(id)).join(', ');

/** JSON with every object's keys in order: two schemas are the same whatever order their keys were written in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}
