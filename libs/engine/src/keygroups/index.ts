export { murmur3 } from './murmur3';
export { hashKey, keyGroupOfKey } from './key-hash';
export {
  MAX_MAX_PARALLELISM,
  InvalidParallelismError,
  assertParallelism,
  keyGroupFor,
  keyGroupRangeFor,
  defaultOwnerOf,
  type KeyGroupRange,
} from './key-groups';
export { encodeKey, decodeKey, keyId, InvalidKeyError, type KeyValue } from './key-serde';
export { RoutingTable, RoutingError } from './routing-table';
export { evenShareMoves, type PlannedMove } from './even-shares';
export { KeySplits, KeySplitError, type KeySplit } from './key-splits';
export { SplitKeyTable, type WeightedSplit } from './split-key-table';
