import { z } from 'zod';
import { pageQueryShape } from '../../pagination/page-query';
import { AUTOSCALER_MODES, DEPLOYMENT_STATUSES, DESIRED_STATES, PARTITIONER_MODES, RESCALE_MODES, RESUME_MODES, UPGRADE_MODES } from '../deployment';

const MAX_PARALLELISM = 32768;
const parallelismValue = z
  .number({ error: `must be an integer from 1 to ${MAX_PARALLELISM}` })
  .int(`must be an integer from 1 to ${MAX_PARALLELISM}`)
  .min(1, `must be an integer from 1 to ${MAX_PARALLELISM}`)
  .max(MAX_PARALLELISM, `must be an integer from 1 to ${MAX_PARALLELISM}`);
const operatorId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an operator id: 1-64 of A-Z, a-z, 0-9, "_" or "-"');

export const parallelismInput = z.strictObject(
  {
    default: parallelismValue.optional(),
    operators: z.record(operatorId, parallelismValue, { error: 'must map operator ids to parallelism' }).optional(),
  },
  { error: 'must be an object: { default?, operators? }' },
);
export type ParallelismInput = z.infer<typeof parallelismInput>;

const bundleRef = z.union(
  [
    z.strictObject({ name: z.string().min(1).max(64), version: z.string().min(1).max(64) }),
    z.strictObject({ id: z.string().regex(/^b[a-f0-9]{24}$/, 'must be a bundle id') }),
  ],
  { error: 'must be { name, version } or { id }' },
);
export type BundleRefInput = z.infer<typeof bundleRef>;

const partitionerMode = z.enum(PARTITIONER_MODES, { error: `must be one of ${PARTITIONER_MODES.join(', ')}` });
const autoscalerMode = z.enum(AUTOSCALER_MODES, { error: `must be one of ${AUTOSCALER_MODES.join(', ')}` });

const topicName = z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'must be a Kafka topic name: 1-249 of A-Z, a-z, 0-9, ".", "_" or "-"');

export const configInput = z.strictObject(
  {
    topics: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a logical topic name'), topicName).optional(),
    properties: z.record(z.string().min(1).max(128), z.string().max(4096)).optional(),
  },
  { error: 'must be an object: { topics?, properties? }' },
);

export const createDeploymentBody = z.strictObject(
  {
    name: z.string({ error: 'is required' }).regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 of a-z, 0-9 and "-", starting with a letter or digit'),
    bundle: bundleRef.optional(),
    bundleId: z.string().regex(/^b[a-f0-9]{24}$/, 'must be a bundle id').optional(),
    parallelism: parallelismInput.optional(),
    config: configInput.optional(),
    desiredState: z.enum(['RUNNING', 'SUSPENDED'], { error: 'must be RUNNING or SUSPENDED' }).optional(),
    /** What the dynamic partitioner may do (default recommend). */
    partitionerMode: partitionerMode.optional(),
    /** What the autoscaler may do (default recommend). */
    autoscalerMode: autoscalerMode.optional(),
  },
  { error: 'must be a JSON object' },
).superRefine((body, ctx) => {
  if (!body.bundle === !body.bundleId) ctx.addIssue({ code: 'custom', path: ['bundle'], message: 'give exactly one of bundle { name, version } and bundleId' });
});
export type CreateDeploymentBody = z.infer<typeof createDeploymentBody>;

export const patchDeploymentBody = z.strictObject(
  {
    desiredState: z.enum(DESIRED_STATES, { error: `must be one of ${DESIRED_STATES.join(', ')}` }).optional(),
    parallelism: parallelismInput.optional(),
    /** With desiredState RUNNING: restore the state kept at suspend (default) or start without it. */
    resumeMode: z.enum(RESUME_MODES, { error: `must be one of ${RESUME_MODES.join(', ')}` }).optional(),
    /** With parallelism: live (default; a restart where the run cannot change live) or restart. */
    rescaleMode: z.enum(RESCALE_MODES, { error: `must be one of ${RESCALE_MODES.join(', ')}` }).optional(),
    /** What the dynamic partitioner may do from now on. */
    partitionerMode: partitionerMode.optional(),
    /** What the autoscaler may do from now on. */
    autoscalerMode: autoscalerMode.optional(),
  },
  { error: 'must be a JSON object' },
)
  .refine((b) => b.desiredState !== undefined || b.parallelism !== undefined || b.partitionerMode !== undefined || b.autoscalerMode !== undefined, {
    message: 'give desiredState, parallelism, partitionerMode or autoscalerMode',
    path: ['desiredState'],
  })
  .refine((b) => b.rescaleMode === undefined || b.parallelism !== undefined, { message: 'applies with parallelism only', path: ['rescaleMode'] })
  .refine((b) => b.resumeMode === undefined || b.desiredState === 'RUNNING', { message: 'applies to desiredState RUNNING only', path: ['resumeMode'] });
export type PatchDeploymentBody = z.infer<typeof patchDeploymentBody>;

export const upgradeDeploymentBody = z.strictObject(
  {
    bundle: bundleRef.optional(),
    bundleId: z.string().regex(/^b[a-f0-9]{24}$/, 'must be a bundle id').optional(),
    mode: z.enum(UPGRADE_MODES, { error: `must be one of ${UPGRADE_MODES.join(', ')}` }),
    parallelism: parallelismInput.optional(),
  },
  { error: 'must be a JSON object' },
).superRefine((body, ctx) => {
  if (!body.bundle === !body.bundleId) ctx.addIssue({ code: 'custom', path: ['bundle'], message: 'give exactly one of bundle { name, version } and bundleId' });
});
export type UpgradeDeploymentBody = z.infer<typeof upgradeDeploymentBody>;

export const deploymentIdParams = z.object({
  id: z.string().regex(/^d[a-f0-9]{24}$/, 'must be a deployment id (d followed by 24 hex digits)'),
});

export const listDeploymentsQuery = z.strictObject({
  ...pageQueryShape,
  status: z.enum(DEPLOYMENT_STATUSES, { error: `must be one of ${DEPLOYMENT_STATUSES.join(', ')}` }).optional(),
});

export const historyQuery = z.strictObject({ ...pageQueryShape });
