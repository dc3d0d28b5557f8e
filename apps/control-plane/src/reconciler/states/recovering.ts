import { driveToRunning } from '../drive-to-running';
import type { StateHandler } from '../state-machine';

/**
 * The run's worker is lost (or restarted without the job): write the run off and place a new one on a live
 * worker. The new run starts without state: recovery from checkpoints arrives with issue 5.
 */
export const recovering: StateHandler = (ctx) => driveToRunning(ctx);
