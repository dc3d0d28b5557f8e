/**
 * Client settings chosen for throughput on a stream engine's hot path. Measured figures are in docs/kafka.md.
 */
export const fetchTuning = {
  // Return as soon as any record exists: under load fetches fill up by themselves, when idle latency stays low.
  minBytes: 1,
  // How long an idle fetch parks at the broker, and how long kafkajs sleeps while every partition is paused, so it
  // bounds the stall after backpressure lifts: short, but not so short that idle readers spin.
  maxWaitTimeInMs: 100,
  // 512 KiB to 4 MiB per partition read equally fast here (within the noise, docs/kafka.md); 1 MiB (Kafka's own
  // default) keeps what one fetch adds to memory, on top of the record buffer, small per reader.
  maxBytesPerPartition: 1024 * 1024,
  maxBytes: 8 * 1024 * 1024,
} as const;

export const readerDefaults = {
  // Roughly one fetch of ~100-byte records over a few partitions; poll() callers take up to a few thousand at once.
  maxBufferedRecords: 20_000,
  // Resume fetching once the buffer has drained to this fraction, leaving a fetch's worth of headroom.
  resumeFraction: 0.5,
} as const;

export const groupTuning = {
  // The group has one member and nothing to balance: these only bound how long a dead reader's group lingers.
  sessionTimeout: 30_000,
  heartbeatInterval: 3_000,
} as const;

export const producerTuning = {
  // Idempotence and transactions in kafkajs keep sequence numbers right only with one request in flight.
  maxInFlightRequests: 1,
  // Kafka's default transaction timeout: an abandoned transaction is aborted by the broker after this.
  transactionTimeout: 60_000,
  // One request (estimated generously) stays under the broker's 1 MiB message.max.bytes even when every record of
  // it goes to one partition.
  maxRequestBytes: 768 * 1024,
} as const;

// Admin calls (and resolving a reader's start offsets) give up after ~3 s instead of kafkajs's ~9 s: the caller gets a
// retriable typed error and decides, and a topic deleted elsewhere costs one short detour instead of a long stall.
export const adminRetry = { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 } as const;
// The same for writers created with `failFast` (a caller waits on each send).
export const failFastRetry = adminRetry;

export const pingTimeoutMs = 2_000;
