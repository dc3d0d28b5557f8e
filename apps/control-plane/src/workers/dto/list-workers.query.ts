import { z } from 'zod';
import { pageQueryShape } from '../../pagination/page-query';
import { WORKER_STATUSES } from '../worker';

export const listWorkersQuerySchema = z.strictObject({
  ...pageQueryShape,
  status: z.enum(WORKER_STATUSES, { error: `must be one of ${WORKER_STATUSES.join(', ')}` }).optional(),
});

export const workerIdParamsSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be 1-128 characters of A-Z, a-z, 0-9, ".", "_" or "-"'),
});
