import { InvalidCheckpointError } from './errors';

/**
 * Where checkpoint data lives in the bucket, all under `tenants/<tenantId>/jobs/<jobId>/`:
 *
 *   shared/<sha256>                              every state file and metadata blob, content-addressed
 *   checkpoints/<checkpointId, 20 digits>/manifest.json
 *   savepoints/<savepointId>/manifest.json
 *   pending/<name>.json                          a write in progress (what retention must not collect)
 *
 * Checkpoint ids are zero-padded so that S3's lexicographic listing is numeric order.
 */

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function checkId(what: string, id: string): void {
  if (!ID.test(id)) throw new InvalidCheckpointError(`${what} ${JSON.stringify(id)} must match ${ID}`);
}

export function checkCheckpointId(checkpointId: number): void {
  if (!Number.isSafeInteger(checkpointId) || checkpointId < 0) {
    throw new InvalidCheckpointError(`checkpoint id ${checkpointId} must be a non-negative safe integer`);
  }
}

export interface JobScope {
  readonly tenantId: string;
  readonly jobId: string;
}

export function jobPrefix({ tenantId, jobId }: JobScope): string {
  checkId('tenant id', tenantId);
  checkId('job id', jobId);
  return `tenants/${tenantId}/jobs/${jobId}/`;
}

export const sharedPrefix = (job: JobScope): string => `${jobPrefix(job)}shared/`;
export const checkpointsPrefix = (job: JobScope): string => `${jobPrefix(job)}checkpoints/`;
export const savepointsPrefix = (job: JobScope): string => `${jobPrefix(job)}savepoints/`;
export const pendingPrefix = (job: JobScope): string => `${jobPrefix(job)}pending/`;

export function checkpointManifestKey(job: JobScope, checkpointId: number): string {
  checkCheckpointId(checkpointId);
  return `${checkpointsPrefix(job)}${String(checkpointId).padStart(20, '0')}/manifest.json`;
}

export function savepointManifestKey(job: JobScope, savepointId: string): string {
  checkId('savepoint id', savepointId);
  return `${savepointsPrefix(job)}${savepointId}/manifest.json`;
}

export function pendingKey(job: JobScope, name: string): string {
  return `${pendingPrefix(job)}${name}.json`;
}

/** The checkpoint id of a manifest key under `checkpoints/`, or undefined for anything else found there. */
export function checkpointIdOfKey(job: JobScope, key: string): number | undefined {
  const match = /^(\d{20})\/manifest\.json$/.exec(key.slice(checkpointsPrefix(job).length));
  return match ? Number(match[1]) : undefined;
}

export function savepointIdOfKey(job: JobScope, key: string): string | undefined {
  const match = /^([^/]+)\/manifest\.json$/.exec(key.slice(savepointsPrefix(job).length));
  return match ? match[1] : undefined;
}
