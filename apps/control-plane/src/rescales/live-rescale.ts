import { randomBytes } from 'node:crypto';

/** `r` + 12 hex digits of epoch ms + 12 random: ids sort by request time, so the latest rescale is a key order. */
export function newRescaleId(now = Date.now()): string {
  return `r${now.toString(16).padStart(12, '0').slice(-12)}${randomBytes(6).toString('hex')}`;
}

/**
 * The rescale-run command's idempotency key (its BullMQ job id on process 0's worker's queue): one per rescale, so a
 * resend after a control-plane crash, or by another instance, is the same job, dropped by BullMQ and by the worker.
 */
export const rescaleCommandKey = (deploymentId: string, rescaleId: string) => `${deploymentId}-rescale-${rescaleId}`;
