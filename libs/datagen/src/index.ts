/** Deterministic data for demos, benchmarks and tests: seeded randomness, skewed keys, transaction streams. */
export { seededRandom } from './random';
export { zipfSampler, zipfTopShare } from './zipf';
export {
  GeneratorOptionsError,
  TRANSACTION_KEY_FIELDS,
  TransactionStream,
  type Burst,
  type KeySpace,
  type Transaction,
  type TransactionKeyField,
  type TransactionStreamOptions,
} from './transactions';
export { paced, type PacingOptions } from './schedule';
