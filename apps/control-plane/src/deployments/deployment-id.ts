import { randomBytes } from 'node:crypto';

/**
 * `d` + 12 hex digits of the creation time in ms + 12 random hex digits: unique without coordination, and in
 * creation order, so the keyset-paged list reads oldest first. Safe as a job id, an S3 key part and a topic part.
 */
export function newDeploymentId(now = Date.now()): string {
  return `d${now.toString(16).padStart(12, '0').slice(-12)}${randomBytes(6).toString('hex')}`;
}
