import { z } from 'zod';
import { parallelismInput } from '../deployments/dto/deployment-input';

const savepointId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'expected 1-128 of [A-Za-z0-9._-], not starting with . _ -');

export const savepointParams = z.strictObject({ id: z.string().min(1).max(64), savepointId: savepointId.optional() });

export const triggerSavepointBody = z.strictObject({
  /** The trigger id, which becomes the savepoint id; a retry with the same id takes no second savepoint. */
  savepointId: savepointId.optional(),
  /** Stop the deployment (desired state SUSPENDED) once the savepoint is taken. */
  stop: z.boolean().optional(),
});
export type TriggerSavepointBody = z.infer<typeof triggerSavepointBody>;

export const restoreCheckBody = z.strictObject({ bundleId: z.string().min(1).max(64) });

export const restoreSavepointBody = z.strictObject({
  /** Restore into this bundle version (another version of the deployment's bundle); default: the current one. */
  bundleId: z.string().min(1).max(64).optional(),
  /** Restore at this parallelism; key groups spread over the new subtasks. */
  parallelism: parallelismInput.optional(),
  /** Drop the state of operators the bundle does not have instead of refusing the restore. */
  allowNonRestoredState: z.boolean().optional(),
});
export type RestoreSavepointBody = z.infer<typeof restoreSavepointBody>;
