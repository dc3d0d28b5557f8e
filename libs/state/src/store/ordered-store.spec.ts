import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyGroupRange } from '../keys/key-layout';
import { LevelStore } from './level-store';
import { MemoryStore } from './memory-store';
import type { OrderedStore, StoreEntry } from './ordered-store';
import { RocksStore } from './rocks-store';

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'weir-store-'));
  dirs.push(dir);
  return dir;
};

const stores: Record<string, () => Promise<OrderedStore>> = {
  memory: async () => new MemoryStore(),
  rocksdb: () => RocksStore.open(tempDir()),
  leveldb: () => LevelStore.open(tempDir()),
};

const b = (...bytes: number[]): Buffer => Buffer.from(bytes);
const v = (text: string): Buffer => Buffer.from(text);

async function collect(chunks: AsyncIterable<readonly StoreEntry[]>): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const chunk of chunks) for (const { key, value } of chunk) out.push([key.toString('hex'), value.toString()]);
  return out;
}

describe.each(Object.keys(stores))('ordered store: %s', (name) => {
  let store: OrderedStore | undefined;
  const open = async (): Promise<OrderedStore> => (store = await stores[name]());

  afterEach(async () => {
    await store?.close();
    store = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('writes in batches and reads many keys at once, absent ones as undefined', async () => {
    const s = await open();
    await s.writeBatch([
      { kind: 'put', key: b(1, 1), value: v('a') },
      { kind: 'put', key: b(1, 2), value: v('b') },
      { kind: 'delete', key: b(1, 1) },
      { kind: 'put', key: b(1, 3), value: v('c') },
    ]);
    const values = await s.getMany([b(1, 1), b(1, 2), b(9), b(1, 3)]);
    expect(values.map((x) => x?.toString())).toEqual([undefined, 'b', undefined, 'c']);
    expect(await s.getMany([])).toEqual([]);
  });

  it('does not alias the caller buffers it was given', async () => {
    const s = await open();
    const value = v('original');
    await s.writeBatch([{ kind: 'put', key: b(5), value }]);
    value.write('mutated!');
    expect((await s.getMany([b(5)]))[0]?.toString()).toBe('original');
  });

  it('scans a range in byte order, in chunks, excluding the upper bound', async () => {
    const s = await open();
    const writes = Array.from({ length: 3000 }, (_, i) => {
      const key = Buffer.alloc(4);
      key.writeUInt16BE(i % 3, 0);
      key.writeUInt16BE(2999 - i, 2);
      return { kind: 'put' as const, key, value: v(String(i)) };
    });
    await s.writeBatch(writes);
    const scanned = await collect(s.scan(keyGroupRange(1)));
    expect(scanned).toHaveLength(1000);
    const keys = scanned.map(([key]) => key);
    expect([...keys].sort()).toEqual(keys);
    expect(keys.every((key) => key.startsWith('0001'))).toBe(true);
  });

  it('deletes one range and leaves its neighbours', async () => {
    const s = await open();
    await s.writeBatch([
      { kind: 'put', key: b(0, 1, 255), value: v('before') },
      { kind: 'put', key: b(0, 2), value: v('first') },
      { kind: 'put', key: b(0, 2, 255, 255), value: v('last') },
      { kind: 'put', key: b(0, 3), value: v('after') },
    ]);
    await s.deleteRange(keyGroupRange(2));
    expect(await collect(s.scan({ gte: b(0), lt: b(1) }))).toEqual([
      ['0001ff', 'before'],
      ['0003', 'after'],
    ]);
    await s.writeBatch([{ kind: 'put', key: b(0, 2, 7), value: v('again') }]);
    expect((await s.getMany([b(0, 2, 7), b(0, 2)])).map((x) => x?.toString())).toEqual(['again', undefined]);
  });

  it('sees deletes and re-puts in scans after they happen', async () => {
    const s = await open();
    await s.writeBatch([
      { kind: 'put', key: b(0, 0, 1), value: v('x') },
      { kind: 'put', key: b(0, 0, 2), value: v('y') },
    ]);
    expect(await collect(s.scan(keyGroupRange(0)))).toHaveLength(2);
    await s.writeBatch([
      { kind: 'delete', key: b(0, 0, 1) },
      { kind: 'put', key: b(0, 0, 1), value: v('x2') },
      { kind: 'delete', key: b(0, 0, 2) },
    ]);
    expect(await collect(s.scan(keyGroupRange(0)))).toEqual([['000001', 'x2']]);
  });
});

describe('LSM stores keep their data across reopen', () => {
  it.each([
    ['rocksdb', RocksStore.open],
    ['leveldb', LevelStore.open],
  ] as const)('%s', async (_name, openStore) => {
    const dir = mkdtempSync(join(tmpdir(), 'weir-store-'));
    try {
      const first = await openStore(dir);
      await first.writeBatch([{ kind: 'put', key: b(0, 1), value: v('durable') }]);
      await first.close();
      const second = await openStore(dir);
      expect((await second.getMany([b(0, 1)]))[0]?.toString()).toBe('durable');
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
