import { driveToRunning } from '../drive-to-running';
import type { StateHandler } from '../state-machine';

/**
 * The run's worker is lost (or restarted without the job): write the run off and place a new one on a live
 * worker. The new run restores the latest usable checkpoint (drive-to-running: restoreFromFor).
 */
export const recovering: StateHandler = (ctx) => driveToRunning(ctx);
