import { z } from 'zod';
import { pageQueryShape } from '../../pagination/page-query';

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const id = (what: string) => z.string().regex(ID, `must be a ${what} id (1-64 of A-Z, a-z, 0-9, "_", "-")`);
const versionMessage = 'must be a rules version number (an integer of at least 1)';
const versionParam = z.string().regex(/^[1-9]\d{0,8}$/, versionMessage).transform(Number);

export const deploymentParamsSchema = z.strictObject({ id: id('deployment') });
export const versionParamsSchema = z.strictObject({ id: id('deployment'), version: versionParam });
export const rolloutParamsSchema = z.strictObject({ id: id('deployment'), rolloutId: id('rollout') });
export const listVersionsQuerySchema = z.strictObject(pageQueryShape);
export const rollbackBodySchema = z.strictObject({
  toVersion: z.number({ error: versionMessage }).int(versionMessage).min(1, versionMessage),
});
export const shadowResultsQuerySchema = z.strictObject({ limit: pageQueryShape.limit });
