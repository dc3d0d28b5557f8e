import { randomBytes } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { javaCompatiblePartitioner, murmur2 } from './partitioner';

// kafkajs's own murmur2 (Long arithmetic), the reference the fast one must match.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: Buffer | string) => number;

describe('murmur2', () => {
  it('matches kafkajs (and so the Java client) for keys of every length and byte value', () => {
    for (let length = 0; length < 70; length++) {
      for (let trial = 0; trial < 20; trial++) {
        const key = randomBytes(length);
        expect(murmur2(key)).toBe(kafkajsMurmur2(key));
      }
    }
    expect(murmur2(Buffer.from('user-42'))).toBe(kafkajsMurmur2('user-42'));
  });
});

describe('javaCompatiblePartitioner', () => {
  const partitionMetadata = Array.from({ length: 7 }, (_, partitionId) => ({ partitionId, leader: partitionId === 3 ? -1 : 1, replicas: [], isr: [], partitionErrorCode: 0, offlineReplicas: [] }));

  it('puts keyed and explicitly placed records where kafkajs DefaultPartitioner does', () => {
    const ours = javaCompatiblePartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    for (let i = 0; i < 2_000; i++) {
      const message = { key: i % 2 ? `card-${i}` : Buffer.from(`k${i * 7}`), value: 'v', partition: i % 13 === 0 ? i % 7 : undefined };
      expect(ours({ topic: 't', partitionMetadata, message })).toBe(theirs({ topic: 't', partitionMetadata, message }));
    }
  });

  it('sends keyless records round-robin over partitions that have a leader', () => {
    const ours = javaCompatiblePartitioner();
    const seen = Array.from({ length: 12 }, () => ours({ topic: 't', partitionMetadata, message: { value: 'v' } }));
    expect(seen).not.toContain(3);
    expect(new Set(seen.slice(0, 6)).size).toBe(6);
    expect(seen.slice(6)).toEqual(seen.slice(0, 6));
  });
});
