/** Deterministic data for demos, benchmarks and tests: seeded randomness and skewed key distributions. */
export { seededRandom } from './random';
export { zipfSampler, zipfTopShare } from './zipf';
