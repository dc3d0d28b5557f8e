import { driveToRunning } from '../drive-to-running';
import type { StateHandler } from '../state-machine';

/**
 * A parallelism change: stop the run, start one with the new parallelism. A restart for now, without state
 * (checkpoints are issue 5); moving only the key groups that must move, without stopping, is the live rescale.
 */
export const rescaling: StateHandler = (ctx) => driveToRunning(ctx);
