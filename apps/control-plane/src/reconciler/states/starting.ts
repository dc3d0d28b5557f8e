import { driveToRunning } from '../drive-to-running';
import type { StateHandler } from '../state-machine';

/** Placing a run and waiting for its worker to report every subtask RUNNING. */
export const starting: StateHandler = (ctx) => driveToRunning(ctx);
