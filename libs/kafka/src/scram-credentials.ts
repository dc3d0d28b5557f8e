/**
 * SCRAM users over the Kafka protocol (AlterUserScramCredentials, KIP-554), which kafkajs does not implement.
 * The one request is encoded with kafkajs's own encoder and sent over a broker connection of a kafkajs cluster, so
 * connection set-up, SASL, retries and framing stay kafkajs's; only the request's body is Weir's. kafkajs is pinned
 * (package-lock) and reaches its cluster through a private symbol: test/kafka/tenant-access.test.ts proves both on
 * the real broker, and a kafkajs that no longer has them fails with the error below rather than silently.
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { KafkaError, KafkaUsageError } from './errors';

// kafkajs's protocol codecs (CommonJS, untyped): the same ones its own requests use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Encoder = require('kafkajs/src/protocol/encoder') as new () => KafkajsEncoder;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Decoder = require('kafkajs/src/protocol/decoder') as new (data: Buffer) => KafkajsDecoder;

interface KafkajsEncoder {
  writeUVarIntBytes(value?: Buffer): KafkajsEncoder;
  writeUVarIntString(value: string): KafkajsEncoder;
  writeUVarIntArray(items: KafkajsEncoder[]): KafkajsEncoder;
  writeInt8(value: number): KafkajsEncoder;
  writeInt32(value: number): KafkajsEncoder;
}
interface KafkajsDecoder {
  readTaggedFields(): unknown;
  readInt16(): number;
  readInt32(): number;
  readUVarIntString(): string | null;
  readUVarIntArray<T>(read: (d: KafkajsDecoder) => T): T[];
}
interface KafkajsBroker {
  connectionPool: { send(request: unknown): Promise<unknown> };
}
interface KafkajsCluster {
  connect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  disconnect(): Promise<void>;
  findControllerBroker(): Promise<KafkajsBroker>;
}

const ALTER_USER_SCRAM_CREDENTIALS = 51;
const SCRAM_SHA_256 = 1;
/** Kafka's minimum for SCRAM-SHA-256, and what its own tools use. */
const ITERATIONS = 4096;

interface UserResult {
  user: string | null;
  errorCode: number;
  errorMessage: string | null;
}

/** AlterUserScramCredentials v0 (flexible): no deletions, one upsertion. */
function alterRequest(username: string, password: string) {
  const salt = randomBytes(32);
  const saltedPassword = pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  const upsertion = new Encoder()
    .writeUVarIntString(username)
    .writeInt8(SCRAM_SHA_256)
    .writeInt32(ITERATIONS)
    .writeUVarIntBytes(salt)
    .writeUVarIntBytes(saltedPassword)
    .writeUVarIntBytes();
  return {
    request: {
      apiKey: ALTER_USER_SCRAM_CREDENTIALS,
      apiVersion: 0,
      apiName: 'AlterUserScramCredentials',
      // The request header's tagged fields (header v2) come first, as in kafkajs's flexible requests.
      encode: async () => new Encoder().writeUVarIntBytes().writeUVarIntArray([]).writeUVarIntArray([upsertion]).writeUVarIntBytes(),
    },
    response: {
      decode: async (raw: Buffer) => {
        const decoder = new Decoder(raw);
        decoder.readTaggedFields();
        decoder.readInt32(); // throttle time
        const results = decoder.readUVarIntArray((d): UserResult => {
          const result = { user: d.readUVarIntString(), errorCode: d.readInt16(), errorMessage: d.readUVarIntString() };
          d.readTaggedFields();
          return result;
        });
        return { results };
      },
      parse: async (data: { results: UserResult[] }) => data,
    },
  };
}

function clusterOf(kafka: Kafka): KafkajsCluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  const create = symbol ? (kafka as unknown as Record<symbol, unknown>)[symbol] : undefined;
  if (typeof create !== 'function') {
    throw new KafkaUsageError('this kafkajs version does not expose its cluster: SCRAM users cannot be created (pin kafkajs 2.2.x)');
  }
  return (create as (o: object) => KafkajsCluster)({ allowAutoTopicCreation: false });
}

/** Creates the SCRAM-SHA-256 user `username`, or replaces its password. */
export async function upsertScramUser(kafka: Kafka, username: string, password: string): Promise<void> {
  const cluster = clusterOf(kafka);
  try {
    await cluster.connect();
    await cluster.refreshMetadata();
    // KRaft brokers forward the request to the controller quorum; kafkajs's "controller" is a broker there.
    const broker = await cluster.findControllerBroker();
    const { results } = (await broker.connectionPool.send(alterRequest(username, password))) as { results: UserResult[] };
    const failed = results.find((r) => r.errorCode !== 0);
    if (failed) throw new KafkaError(`the broker refused SCRAM credentials for user "${username}": ${failed.errorMessage ?? `error code ${failed.errorCode}`}`);
    if (results.length !== 1) throw new KafkaError(`the broker answered ${results.length} results for SCRAM user "${username}", expected 1`);
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}
