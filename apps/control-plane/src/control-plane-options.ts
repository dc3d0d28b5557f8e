import type { WeirConfig } from '@weir/config';
import type { DestinationStream } from 'pino';

/** Everything the control plane is built from; tests construct it directly, main.ts from the environment. */
export interface ControlPlaneOptions {
  readonly config: WeirConfig;
  /** Where JSON log lines go (default: stdout). The level is WEIR_LOG_LEVEL. */
  readonly logDestination?: DestinationStream;
  /** How often the LOST sweep runs (default: WEIR_WORKER_HEARTBEAT_MS). */
  readonly workerSweepIntervalMs?: number;
  /** Upper bound on each dependency check of /health/ready (default 2000 ms). */
  readonly healthCheckTimeoutMs?: number;
  /** How often the API key uses noted in memory are written (default 60 000 ms): how late `lastUsedAt` may be. */
  readonly apiKeyUsageFlushIntervalMs?: number;
}

export const CONTROL_PLANE_OPTIONS = Symbol('CONTROL_PLANE_OPTIONS');
export const WEIR_CONFIG = Symbol('WEIR_CONFIG');
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
