import { z } from 'zod';
import { pageQueryShape } from '../../pagination/page-query';
import { SCOPES } from '../principal';

const count = (max: number) =>
  z.number({ error: `must be an integer from 0 to ${max}` }).int(`must be an integer from 0 to ${max}`).min(0, `must be an integer from 0 to ${max}`).max(max, `must be an integer from 0 to ${max}`);

const MAX_BUNDLE_BYTES = 5 * 1024 ** 3;

const tenantName = (typeError: string) =>
  z.string({ error: typeError }).trim().min(1, 'must be 1-200 characters').max(200, 'must be 1-200 characters');

/** The quotas as create and patch take them: each optional, with the same bounds. */
const quotaFields = {
  maxDeployments: count(100_000).optional(),
  maxTotalParallelism: count(1_000_000).optional(),
  maxBundleBytes: z
    .number({ error: `must be an integer from 1 to ${MAX_BUNDLE_BYTES}` })
    .int(`must be an integer from 1 to ${MAX_BUNDLE_BYTES}`)
    .min(1, `must be an integer from 1 to ${MAX_BUNDLE_BYTES}`)
    .max(MAX_BUNDLE_BYTES, `must be an integer from 1 to ${MAX_BUNDLE_BYTES}`)
    .optional(),
};

export const createTenantBodySchema = z.strictObject({
  name: tenantName('is required: 1-200 characters'),
  quotas: z.strictObject(quotaFields).optional(),
});

/** A patch changes something: an empty one (or empty quotas) is a caller's mistake, not a no-op. */
export const patchTenantBodySchema = z
  .strictObject(
    {
      name: tenantName('must be a string of 1-200 characters').optional(),
      quotas: z
        .strictObject(quotaFields, { error: 'must be an object' })
        .refine((q) => Object.values(q).some((v) => v !== undefined), 'must name at least one of maxDeployments, maxTotalParallelism, maxBundleBytes')
        .optional(),
    },
    { error: 'must be a JSON object' },
  )
  .refine((b) => b.name !== undefined || b.quotas !== undefined, 'must change name or quotas (or both)');
export type PatchTenantBody = z.infer<typeof patchTenantBodySchema>;

export const createApiKeyBodySchema = z.strictObject({
  name: z.string({ error: 'is required: 1-100 characters' }).trim().min(1, 'must be 1-100 characters').max(100, 'must be 1-100 characters'),
  scope: z.enum(SCOPES as ['read', 'write', 'rules'], { error: `must be one of ${SCOPES.join(', ')}` }),
});

const TENANT_ID = /^t[a-f0-9]{20}$/;
const KEY_ID = /^[a-f0-9]{24}$/;

export const tenantIdParamsSchema = z.object({ id: z.string().regex(TENANT_ID, 'is not a tenant id') });
export const apiKeyIdParamsSchema = z.object({ id: z.string().regex(KEY_ID, 'is not an API key id') });
export const listApiKeysQuerySchema = z.strictObject({ ...pageQueryShape });
export const listTenantsQuerySchema = z.strictObject({ ...pageQueryShape });
