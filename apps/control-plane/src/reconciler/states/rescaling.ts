import { driveToRunning } from '../drive-to-running';
import type { StateHandler } from '../state-machine';

/**
 * A parallelism change: stop the run, start one with the new parallelism from the latest checkpoint (key groups
 * go to their new owners). A restart for now; moving only the key groups that must move, live, comes later.
 */
export const rescaling: StateHandler = (ctx) => driveToRunning(ctx);
