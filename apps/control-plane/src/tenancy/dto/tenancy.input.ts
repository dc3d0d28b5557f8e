import { z } from 'zod';
import { pageQueryShape } from '../../pagination/page-query';
import { SCOPES } from '../principal';

const count = (max: number) =>
  z.number({ error: `must be an integer from 0 to ${max}` }).int(`must be an integer from 0 to ${max}`).min(0, `must be an integer from 0 to ${max}`).max(max, `must be an integer from 0 to ${max}`);

const MAX_BUNDLE_BYTES = 5 * 1024 ** 3;

export const createTenantBodySchema = z.strictObject({
  name: z.string({ error: 'is required: 1-200 characters' }).trim().min(1, 'must be 1-200 characters').max(200, 'must be 1-200 characters'),
  quotas: z
    .strictObject({
      maxDeployments: count(100_000).optional(),
      maxTotalParallelism: count(1_000_000).optional(),
      maxBundleBytes: z
        .number({ error: `must be an integer from 1 to ${MAX_BUNDLE_BYTES}` })
        .int(`must be an integer from 1 to ${MAX_BUNDLE_BYTES}`)
        .min(1, `must be an integer from 1 to ${MAX_BUNDLE_BYTES}`)
        .max(MAX_BUNDLE_BYTES, `must be an integer from 1 to ${MAX_BUNDLE_BYTES}`)
        .optional(),
    })
    .optional(),
});

export const createApiKeyBodySchema = z.strictObject({
  name: z.string({ error: 'is required: 1-100 characters' }).trim().min(1, 'must be 1-100 characters').max(100, 'must be 1-100 characters'),
  scope: z.enum(SCOPES as ['read', 'write'], { error: `must be one of ${SCOPES.join(', ')}` }),
});

const TENANT_ID = /^t[a-f0-9]{20}$/;
const KEY_ID = /^[a-f0-9]{24}$/;

export const tenantIdParamsSchema = z.object({ id: z.string().regex(TENANT_ID, 'is not a tenant id') });
export const apiKeyIdParamsSchema = z.object({ id: z.string().regex(KEY_ID, 'is not an API key id') });
export const listApiKeysQuerySchema = z.strictObject({ ...pageQueryShape });
