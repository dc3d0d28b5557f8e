import { driveToRunning } from '../drive-to-running';
import type { StateHandler } from '../state-machine';

/**
 * Another bundle version: stop the run, adopt the new bundle, start it: last-state from the latest checkpoint,
 * savepoint from a requested savepoint restore, stateless without state (upgrade-reason.ts says which).
 */
export const upgrading: StateHandler = (ctx) => driveToRunning(ctx);
