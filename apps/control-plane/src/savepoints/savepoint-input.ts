import { z } from 'zod';

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
