import { z } from 'zod';
import { InvalidRequestProblem } from '../problems/problem.exception';
import { badStrings, textProblem } from '../validation/text';
import { rulesSchemaProblem } from './rules-schema';

const SLUG = /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
/** semver 2.0.0: MAJOR.MINOR.PATCH with optional pre-release and build metadata. */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
// As the SDK and the worker protocol take them: a bundle whose ids pass here can be deployed.
const OPERATOR_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;
/** The key-group count is fixed for a job's life; 32768 is Flink's ceiling too. */
export const MAX_KEY_GROUPS = 32_768;

const int = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`;
  return z.number({ error: message }).int(message).min(min, message).max(max, message);
};

const sloSchema = z.strictObject({
  objectiveMs: int(1, 3_600_000),
  percentile: z
    .number({ error: 'must be a number above 0 and below 100 (e.g. 99)' })
    .gt(0, 'must be a number above 0 and below 100 (e.g. 99)')
    .lt(100, 'must be a number above 0 and below 100 (e.g. 99)'),
  windowMinutes: int(1, 43_200),
  target: z
    .number({ error: 'must be a fraction above 0, at most 1 (e.g. 0.99)' })
    .gt(0, 'must be a fraction above 0, at most 1 (e.g. 0.99)')
    .max(1, 'must be a fraction above 0, at most 1 (e.g. 0.99)'),
});

/** What a bundle declares about its job, validated before any byte of the bundle is stored. */
export const bundleManifestSchema = z
  .strictObject({
    name: z.string({ error: 'is required' }).regex(SLUG, 'must be a slug: 1-64 of a-z, 0-9 and "-", not starting or ending with "-"'),
    version: z.string({ error: 'is required' }).max(64, 'must be at most 64 characters').regex(SEMVER, 'must be a semantic version (e.g. 1.4.0 or 2.0.0-rc.1)'),
    entryPoint: z
      .string({ error: 'is required' })
      .regex(FILE_NAME, 'must be a file name (1-128 of A-Z, a-z, 0-9, ".", "_", "-"), without a directory'),
    operatorIds: z
      .array(z.string().regex(OPERATOR_ID, 'must be 1-64 of A-Z, a-z, 0-9, "_", "-", starting with a letter or digit'), { error: 'must be an array of operator ids' })
      .min(1, 'must list at least one operator id')
      .max(256, 'must list at most 256 operator ids')
      .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an operator id'),
    rulesSchema: z
      .record(z.string(), z.unknown(), { error: 'must be a JSON Schema object' })
      .superRefine((schema, ctx) => {
        const problem = rulesSchemaProblem(schema);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    defaultParallelism: int(1, 1024),
    maxParallelism: int(1, MAX_KEY_GROUPS),
    slo: sloSchema.optional(),
    topics: z
      .array(z.string().regex(TOPIC, 'must be a Kafka topic name'), { error: 'must be an array of Kafka topic names' })
      .max(64, 'must list at most 64 topics')
      .optional(),
  })
  .superRefine((m, ctx) => {
    if (m.defaultParallelism > m.maxParallelism) {
      ctx.addIssue({ code: 'custom', path: ['defaultParallelism'], message: `must not exceed maxParallelism (${m.maxParallelism})` });
    }
  });

export type BundleManifest = z.infer<typeof bundleManifestSchema>;

/** The `manifest` multipart field: JSON, validated; an InvalidRequestProblem names each bad `manifest.<field>`. */
export function parseManifestField(raw: string): BundleManifest {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new InvalidRequestProblem([{ in: 'body', name: 'manifest', reason: 'must be a JSON object (it is not valid JSON)' }]);
  }
  // Stored as jsonb, which refuses NUL: named here (manifest.rulesSchema.description) instead of failing in Postgres.
  const badText = badStrings(value, 'body', textProblem, 'manifest');
  if (badText.length > 0) throw new InvalidRequestProblem(badText);
  const result = bundleManifestSchema.safeParse(value);
  if (result.success) return result.data;
  // Full paths, unknown keys included (manifest.slo.extra), so the caller sees exactly which field to fix.
  throw new InvalidRequestProblem(
    result.error.issues.flatMap((issue) => {
      const at = ['manifest', ...issue.path.map(String)];
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => ({ in: 'body' as const, name: [...at, key].join('.'), reason: 'is not a recognised field' }));
      }
      return [{ in: 'body' as const, name: at.join('.'), reason: issue.message }];
    }),
  );
}
