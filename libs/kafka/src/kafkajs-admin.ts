import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes, type Admin, type Kafka } from 'kafkajs';
import type { KafkaAdmin, KafkaGrant, TopicSpec } from './contract';
import { isStaleMetadataError, KafkaUnavailableError, KafkaUsageError, TopicConfigError, TopicNotFoundError, wrapKafkaError } from './errors';
import { upsertScramUser } from './scram-credentials';
import { pingTimeoutMs } from './tuning';

const RESOURCE_TYPES = { topic: AclResourceTypes.TOPIC, group: AclResourceTypes.GROUP, 'transactional-id': AclResourceTypes.TRANSACTIONAL_ID };
const OPERATIONS = {
  read: AclOperationTypes.READ,
  write: AclOperationTypes.WRITE,
  create: AclOperationTypes.CREATE,
  describe: AclOperationTypes.DESCRIBE,
  'describe-configs': AclOperationTypes.DESCRIBE_CONFIGS,
};

export interface PartitionOffsets {
  partition: number;
  earliest: string;
  latest: string;
}

/** How long ensureTopics waits for a new topic's partition leaders before it reports what it found. */
const LEADER_WAIT_MS = 10_000;
/**
 * Fresh-client retries of an admin call that met stale metadata (100, 200, 400 … ms apart after the first, at most
 * 2 s): about 7 s in all, for a topic another process has just created on a broker too busy to elect its leaders at
 * once (two job hosts starting together on a loaded machine failed to start after the former ~1.5 s).
 */
const STALE_RETRIES = 8;

function isUnknownTopic(error: unknown): boolean {
  let current = error as { type?: string; cause?: unknown } | undefined;
  for (let depth = 0; current && depth < 10; depth++) {
    if (current.type === 'UNKNOWN_TOPIC_OR_PARTITION') return true;
    current = current.cause as typeof current;
  }
  return false;
}

function validateSpecs(specs: readonly TopicSpec[]): void {
  const seen = new Set<string>();
  for (const spec of specs) {
    if (!Number.isInteger(spec.partitions) || spec.partitions < 1) {
      throw new TopicConfigError(`Topic "${spec.topic}" needs a whole number of partitions ≥ 1, not ${spec.partitions}`);
    }
    if (seen.has(spec.topic)) throw new TopicConfigError(`Topic "${spec.topic}" is listed twice in ensureTopics()`);
    seen.add(spec.topic);
  }
}

/**
 * Topic management on kafkajs's admin client. It connects lazily, so constructing one costs nothing.
 * kafkajs remembers every topic it was asked about and fails all later metadata refreshes once one of them is
 * deleted elsewhere; when that happens the client is replaced and the call retried once.
 */
export class KafkajsAdmin implements KafkaAdmin {
  private client: Admin;
  private connecting: Promise<void> | null = null;
  private probe: Admin | null = null;
  private closed = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly brokers: readonly string[],
    private readonly createProbe: () => Admin,
  ) {
    this.client = kafka.admin();
  }

  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    validateSpecs(specs);
    if (specs.length === 0) return;
    const names = specs.map((s) => s.topic).join(', ');
    await this.run(`ensuring topics ${names}`, async (admin) => {
      const existing = new Set(await admin.listTopics());
      const missing = specs.filter((s) => !existing.has(s.topic));
      if (missing.length > 0) {
        // A concurrent creator may win the race: kafkajs then reports "already exists", and the check below decides.
        await admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((s) => ({
            topic: s.topic,
            numPartitions: s.partitions,
            configEntries: Object.entries(s.config ?? {}).map(([name, value]) => ({ name, value })),
          })),
        });
      }
      const topics = await this.withLeaders(admin, specs.map((s) => s.topic));
      const counts = new Map(topics.map((t) => [t.name, t.partitions.length]));
      for (const spec of specs) {
        const actual = counts.get(spec.topic) ?? 0;
        if (actual < spec.partitions) {
          throw new TopicConfigError(
            `Kafka topic "${spec.topic}" has ${actual} partitions but ${spec.partitions} are needed; ` +
              `add partitions (kafka-topics.sh --alter --partitions ${spec.partitions}) or use another topic`,
          );
        }
      }
    });
  }

  /**
   * The topics' metadata once every partition has a leader. A concurrent creator's topic exists before its leaders
   * are elected; a reader or writer started then fails ("does not host this topic-partition").
   */
  private async withLeaders(admin: Admin, names: string[]) {
    const deadline = Date.now() + LEADER_WAIT_MS;
    for (;;) {
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      const ready = topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
      if (ready || Date.now() > deadline) return topics;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async upsertScramUser(username: string, password: string): Promise<void> {
    await this.run(`setting the SCRAM credentials of Kafka user ${username}`, () => upsertScramUser(this.kafka, username, password));
  }

  async grant(grants: readonly KafkaGrant[]): Promise<void> {
    const acl = grants.flatMap((g) =>
      g.operations.map((operation) => ({
        resourceType: RESOURCE_TYPES[g.resource],
        resourceName: g.prefix,
        resourcePatternType: ResourcePatternTypes.PREFIXED,
        principal: `User:${g.username}`,
        host: '*',
        operation: OPERATIONS[operation],
        permissionType: AclPermissionTypes.ALLOW,
      })),
    );
    if (acl.length === 0) return;
    await this.run(`granting Kafka ACLs to ${[...new Set(grants.map((g) => g.username))].join(', ')}`, (admin) => admin.createAcls({ acl }));
  }

  async deleteTopics(topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return;
    await this.run(`deleting topics ${topics.join(', ')}`, async (admin) => {
      // kafkajs retries for seconds on unknown topics; deleting one that is gone is simply done.
      const existing = new Set(await admin.listTopics());
      const present = topics.filter((t) => existing.has(t));
      if (present.length > 0) await admin.deleteTopics({ topics: present });
    });
  }

  async listTopics(): Promise<string[]> {
    const topics = await this.run('listing topics', (admin) => admin.listTopics());
    return topics.filter((t) => !t.startsWith('__'));
  }

  async partitionCount(topic: string): Promise<number> {
    return this.run(`reading partitions of ${topic}`, async (admin) => {
      await this.assertExists(admin, topic);
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      return topics[0]?.partitions.length ?? 0;
    });
  }

  async offsets(topic: string): Promise<PartitionOffsets[]> {
    return this.run(`reading offsets of ${topic}`, async (admin) => {
      await this.assertExists(admin, topic);
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets
        .map(({ partition, low, high }) => ({ partition, earliest: low, latest: high }))
        .sort((a, b) => a.partition - b.partition);
    });
  }

  async ping(timeoutMs: number = pingTimeoutMs): Promise<void> {
    if (this.closed) throw new KafkaUsageError('Kafka admin is closed');
    // A separate client without retries: a health check must answer within its timeout, not after backoffs.
    const probe = (this.probe ??= this.createProbe());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([
        (async () => {
          await probe.connect();
          await probe.describeCluster();
        })(),
        timeout,
      ]);
    } catch (error) {
      // Drop the probe so the next ping starts from a clean connection.
      this.probe = null;
      probe.disconnect().catch(() => undefined);
      const where = this.brokers.join(',');
      throw new KafkaUnavailableError(
        `Kafka did not answer a metadata request at ${where} (${(error as Error).message})`,
        error,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([this.client.disconnect(), this.probe?.disconnect()]);
    this.probe = null;
  }

  private async assertExists(admin: Admin, topic: string): Promise<void> {
    const topics = await admin.listTopics();
    if (!topics.includes(topic)) throw new TopicNotFoundError(topic);
  }

  private async connected(): Promise<Admin> {
    if (this.closed) throw new KafkaUsageError('Kafka admin is closed');
    this.connecting ??= this.client.connect().catch((error: unknown) => {
      this.connecting = null;
      throw error;
    });
    await this.connecting;
    return this.client;
  }

  /**
   * Runs an admin call; on metadata that went stale (a topic deleted elsewhere, a partition whose leader is not yet
   * elected or moved: a topic another process has just created) it retries on a fresh client, a few times.
   */
  private async run<T>(action: string, work: (admin: Admin) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work(await this.connected());
      } catch (error) {
        const stale = isUnknownTopic(error) || isStaleMetadataError(error);
        if (!stale || error instanceof TopicNotFoundError || attempt >= STALE_RETRIES) throw wrapKafkaError(error, action, this.brokers);
      }
      await this.recycle();
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }

  private async recycle(): Promise<void> {
    const stale = this.client;
    this.client = this.kafka.admin();
    this.connecting = null;
    await stale.disconnect().catch(() => undefined);
  }
}
