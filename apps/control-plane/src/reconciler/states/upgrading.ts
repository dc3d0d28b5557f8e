import { driveToRunning } from '../drive-to-running';
import type { StateHandler } from '../state-machine';

/**
 * Another bundle version: stop the run, adopt the new bundle, start it. Every mode runs stateless today: the
 * reason recorded on entering UPGRADING says that no savepoint or checkpoint exists to restore (issue 5).
 */
export const upgrading: StateHandler = (ctx) => driveToRunning(ctx);
