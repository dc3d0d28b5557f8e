import type { DeploymentConfig } from '../deployments/deployment';

export interface CheckpointingSettings {
  readonly intervalMs: number;
  readonly retain: number;
  readonly delivery: 'exactly-once' | 'at-least-once';
  /** A checkpoint not complete within this long is given up and reported; the next one follows on schedule. */
  readonly timeoutMs: number;
}

/** Deployment properties that tune checkpoints (strings, as every deployment property). */
export const CHECKPOINT_INTERVAL_PROPERTY = 'checkpoint.interval-ms';
export const CHECKPOINT_RETAIN_PROPERTY = 'checkpoint.retain';
export const DELIVERY_PROPERTY = 'sink.delivery';
export const CHECKPOINT_TIMEOUT_PROPERTY = 'checkpoint.timeout-ms';

export const DEFAULT_CHECKPOINTING: CheckpointingSettings = { intervalMs: 10_000, retain: 3, delivery: 'at-least-once', timeoutMs: 600_000 };

export class CheckpointingSettingsError extends Error {
  override readonly name = 'CheckpointingSettingsError';
}

/**
 * A deployment's checkpoint interval (default 10 s), retained checkpoints (3), timeout (10 min, as Flink's) and sink
 * delivery (at-least-once; exactly-once makes results visible only when the checkpoint that covers them completes).
 */
export function checkpointingOf(config: DeploymentConfig): CheckpointingSettings {
  const p = config.properties ?? {};
  const intervalMs = integer(p[CHECKPOINT_INTERVAL_PROPERTY], DEFAULT_CHECKPOINTING.intervalMs, 100, 86_400_000, CHECKPOINT_INTERVAL_PROPERTY);
  const retain = integer(p[CHECKPOINT_RETAIN_PROPERTY], DEFAULT_CHECKPOINTING.retain, 1, 100, CHECKPOINT_RETAIN_PROPERTY);
  const timeoutMs = integer(p[CHECKPOINT_TIMEOUT_PROPERTY], DEFAULT_CHECKPOINTING.timeoutMs, 1_000, 86_400_000, CHECKPOINT_TIMEOUT_PROPERTY);
  const delivery = p[DELIVERY_PROPERTY] ?? DEFAULT_CHECKPOINTING.delivery;
  if (delivery !== 'exactly-once' && delivery !== 'at-least-once') {
    throw new CheckpointingSettingsError(`properties.${DELIVERY_PROPERTY} must be "exactly-once" or "at-least-once", not "${delivery}"`);
  }
  return { intervalMs, retain, delivery, timeoutMs };
}

/** The problems of a deployment's checkpoint properties, for a 400 at deploy time rather than a failing dispatch. */
export function checkpointingViolations(properties: Readonly<Record<string, string>> | undefined): { in: 'body'; name: string; reason: string }[] {
  try {
    checkpointingOf({ properties });
    return [];
  } catch (err) {
    if (!(err instanceof CheckpointingSettingsError)) throw err;
    const name = /properties\.([^ ]+)/.exec(err.message)?.[1] ?? '';
    return [{ in: 'body', name: `config.properties.${name}`, reason: err.message }];
  }
}

function integer(raw: string | undefined, fallback: number, min: number, max: number, name: string): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new CheckpointingSettingsError(`properties.${name} must be an integer in [${min}, ${max}], not "${raw}"`);
  }
  return n;
}
