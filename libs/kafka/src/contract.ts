/**
 * Weir's own face on Kafka. The engine, the worker and the control plane use only these types; the kafkajs
 * implementation sits behind them so a faster client can replace it without touching the engine.
 *
 * The engine owns source offsets: readers never commit to a consumer group and never auto-commit. A reader is
 * told exactly which partitions to read and from which offset (checkpoints will restore those offsets).
 */

export interface KafkaHeaders {
  readonly [name: string]: Buffer | undefined;
}

/** A record as read. Offsets are strings because they are int64. */
export interface ConsumedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Broker or producer timestamp, epoch ms. */
  readonly timestamp: number;
  readonly headers: KafkaHeaders;
}

/** A record to write. `partition` pins it (the internal key-group topic does); otherwise the key decides. */
export interface ProducedRecord {
  readonly topic: string;
  readonly partition?: number;
  readonly key?: Buffer | string | null;
  readonly value: Buffer | string | null;
  readonly timestamp?: number;
  readonly headers?: KafkaHeaders;
}

export type StartOffset = string | 'earliest' | 'latest';

export interface PartitionAssignment {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to read. */
  readonly offset: StartOffset;
}

export interface ReaderOptions {
  /** Unique per reading subtask; used only as a client/group id, never for committed offsets. */
  readonly readerId: string;
  readonly assignments: readonly PartitionAssignment[];
  /** Fetched records held in memory before the reader pauses fetching (backpressure). */
  readonly maxBufferedRecords?: number;
  /** read_committed (default) hides aborted transactional writes. */
  readonly isolation?: 'read_committed' | 'read_uncommitted';
  /**
   * Partitions the reader may be told to read later (activate): assigned to it from the start but not fetched, so
   * that starting or stopping to read one costs no consumer swap (the Kafka exchange's key-group moves). Offsets in
   * them must be contiguous (no transactions, no compaction).
   */
  readonly standby?: readonly { readonly topic: string; readonly partition: number }[];
}

/** Pull-based reading: the engine asks for a batch when it has room, so backpressure is natural. */
export interface KafkaReader {
  start(): Promise<void>;
  /** Up to `maxRecords` buffered records, waiting at most `maxWaitMs` for the first one. Never awaits per record. */
  poll(maxRecords: number, maxWaitMs: number): Promise<ConsumedRecord[]>;
  /**
   * Replaces the whole assignment: moves partitions to new offsets (restore) or adds/removes partitions (key-group
   * moves). Every listed partition restarts at its given offset and records buffered but not yet polled are dropped,
   * so pass `positions().get(key)` to keep a partition where it is. Call it between polls, not during one.
   */
  reassign(assignments: readonly PartitionAssignment[]): Promise<void>;
  /**
   * Starts reading a standby partition (ReaderOptions.standby) at `offset`, keeping every other partition where it
   * is: no consumer swap, no records dropped. Its records come in poll() once fetched.
   */
  activate(topic: string, partition: number, offset: StartOffset): Promise<void>;
  /** Stops reading a partition at once (its buffered records are dropped): it is standby from now on. */
  deactivate(topic: string, partition: number): void;
  /**
   * Per partition (key "topic:partition"): the next offset the engine will see (what a checkpoint stores). It moves
   * past transaction markers and aborted records once everything before them has been polled.
   */
  positions(): ReadonlyMap<string, string>;
  /** Per partition: offsets between the reader's position and the high watermark last fetched (consumer lag). */
  lag(): ReadonlyMap<string, number>;
  close(): Promise<void>;
}

export interface WriterOptions {
  readonly writerId: string;
  /** Set for exactly-once: the writer then supports transactions. Stable across restarts of the same subtask. */
  readonly transactionalId?: string;
  /** Batch compression. 'none' (default) is fastest on loopback and fast LANs; 'gzip' trades CPU for bytes. */
  readonly compression?: 'none' | 'gzip';
  /**
   * Give up on a failing request after ~3 s of retries instead of kafkajs's ~9 s: for a writer whose caller waits on
   * each send (an HTTP request), which is better told soon and can retry itself. Off by default (the engine's sinks).
   */
  readonly failFast?: boolean;
}

export interface KafkaTransaction {
  send(records: readonly ProducedRecord[]): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

export interface KafkaWriter {
  start(): Promise<void>;
  /** Sends a batch (idempotent producer, acks=all). Resolves when the broker acknowledged every record. */
  send(records: readonly ProducedRecord[]): Promise<void>;
  /** Only for writers created with a transactionalId. */
  transaction(): Promise<KafkaTransaction>;
  close(): Promise<void>;
}

export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  readonly config?: Readonly<Record<string, string>>;
}

export interface KafkaAdmin {
  /** Creates missing topics; checks that existing ones have at least the asked partitions. */
  ensureTopics(specs: readonly TopicSpec[]): Promise<void>;
  deleteTopics(topics: readonly string[]): Promise<void>;
  /** Every topic's name (Kafka's own internal topics, such as __consumer_offsets, left out). */
  listTopics(): Promise<string[]>;
  partitionCount(topic: string): Promise<number>;
  /** Earliest and latest offsets of every partition of a topic. */
  offsets(topic: string): Promise<{ partition: number; earliest: string; latest: string }[]>;
  /** Cheap liveness probe for health checks: resolves when a broker answers metadata within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  /** Creates the SCRAM-SHA-256 user, or sets its password (brokers with SASL/SCRAM; a platform client). */
  upsertScramUser(username: string, password: string): Promise<void>;
  /** Adds ALLOW ACLs (brokers with an authorizer; a platform client). Idempotent: an existing binding stays as is. */
  grant(grants: readonly KafkaGrant[]): Promise<void>;
  close(): Promise<void>;
}

/** What a user may do with the resources whose names start with `prefix`. */
export interface KafkaGrant {
  readonly username: string;
  readonly resource: 'topic' | 'group' | 'transactional-id';
  readonly prefix: string;
  readonly operations: readonly ('read' | 'write' | 'create' | 'describe' | 'describe-configs')[];
}

/** The one factory the rest of Weir holds. */
export interface KafkaConnector {
  reader(options: ReaderOptions): KafkaReader;
  writer(options: WriterOptions): KafkaWriter;
  admin(): KafkaAdmin;
}

export interface KafkaCredentials {
  readonly username: string;
  readonly password: string;
}

export type KafkaLogLevel = 'error' | 'warn' | 'info' | 'debug';

/** Where the client's own log lines go. */
export type KafkaLogSink = (level: KafkaLogLevel, message: string, fields: Readonly<Record<string, unknown>>) => void;

export interface KafkaConnectorConfig {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Authenticate with SASL/SCRAM-SHA-256 as this user (a job host, as its tenant); absent: no authentication. */
  readonly sasl?: KafkaCredentials;
  /** The client's log threshold; 'warn' by default (the client is chatty at info). */
  readonly logLevel?: KafkaLogLevel;
  /** Defaults to one JSON line per entry on stderr. */
  readonly log?: KafkaLogSink;
}
