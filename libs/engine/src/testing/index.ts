export { TestDriver, type TestDriverOptions } from './test-driver';
export { ManualClock } from './manual-clock';
