import { z } from 'zod';
import { pageQueryShape } from '../../pagination/page-query';
import { SLO_PERCENTILES } from '../slo';

const idMessage = 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"';
export const resourceIdSchema = z.string({ error: idMessage }).regex(/^[A-Za-z0-9_-]{1,64}$/, idMessage);

/** The body of POST /v1/slos and the input of the createSlo mutation. */
export const createSloSchema = z.strictObject({
  name: z.string({ error: 'must be a string of 1-200 characters' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  deploymentId: resourceIdSchema,
  percentile: z.enum(SLO_PERCENTILES, { error: `must be one of ${SLO_PERCENTILES.join(', ')}` }).default('p99'),
  thresholdMs: z
    .number({ error: 'must be a number of milliseconds' })
    .positive('must be greater than 0')
    .max(3_600_000, 'must be at most 3600000 (one hour: latencies are recorded up to that)'),
  target: z
    .number({ error: 'must be a number between 0 and 1 (0.99 for 99%)' })
    .gt(0, 'must be greater than 0')
    .lt(1, 'must be less than 1 (0.99 for 99%): a target of 100% leaves no error budget'),
  windowMinutes: z
    .number({ error: 'must be an integer number of minutes' })
    .int('must be an integer number of minutes')
    .min(5, 'must be at least 5')
    .max(43_200, 'must be at most 43200 (30 days)')
    .default(60),
});
export type CreateSloInput = z.infer<typeof createSloSchema>;

export const listSlosQuerySchema = z.strictObject({ ...pageQueryShape, deploymentId: resourceIdSchema.optional() });
export const listSloEventsQuerySchema = z.strictObject({ ...pageQueryShape });
export const sloIdParamsSchema = z.object({ id: resourceIdSchema });
