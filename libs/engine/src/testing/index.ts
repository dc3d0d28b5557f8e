export { TestDriver, type TestDriverOptions } from './test-driver';
export { ManualClock } from './manual-clock';
export { memoryIoOf, type JobMemoryIo } from '../runtime/memory-io';
