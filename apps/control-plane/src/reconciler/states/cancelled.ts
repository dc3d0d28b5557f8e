import { stay, type StateHandler } from '../state-machine';

/** Terminal: nothing runs and nothing will. Its name is free for a new deployment. */
export const cancelled: StateHandler = async () => stay();
