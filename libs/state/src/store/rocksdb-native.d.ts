/** The part of rocksdb-native (which ships no types) that libs/state uses. */
declare module 'rocksdb-native' {
  interface RocksDBOptions {
    readonly maxBackgroundJobs?: number;
    readonly writeBufferSize?: number;
    readonly tableBlockSize?: number;
  }

  interface ReadBatch {
    get(key: Buffer): Promise<Buffer | null>;
    flush(): Promise<void>;
    destroy(): void;
  }

  interface WriteBatch {
    tryPut(key: Buffer, value: Buffer): void;
    tryDelete(key: Buffer): void;
    tryDeleteRange(start: Buffer, end: Buffer): void;
    flush(): Promise<void>;
    destroy(): void;
  }

  interface IteratorRange {
    readonly gte?: Buffer;
    readonly lt?: Buffer;
  }

  interface IteratorOptions {
    /** Entries fetched per native read. */
    readonly capacity?: number;
  }

  /** A streamx Readable of entries (read() returns null when nothing is buffered). */
  interface RocksIterator extends AsyncIterable<{ key: Buffer; value: Buffer }> {
    read(): { key: Buffer; value: Buffer } | null;
    on(event: 'readable' | 'end' | 'close', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    destroy(): void;
  }

  class RocksDB {
    constructor(path: string, options?: RocksDBOptions);
    ready(): Promise<void>;
    close(): Promise<void>;
    read(options?: { capacity?: number; autoDestroy?: boolean }): ReadBatch;
    write(options?: { capacity?: number; autoDestroy?: boolean }): WriteBatch;
    iterator(range: IteratorRange, options?: IteratorOptions): RocksIterator;
    /** A session reading at a snapshot taken now (close() releases it). */
    snapshot(): RocksDB;
    /** Flushes the memtable to an SST file. */
    flush(): Promise<void>;
    /** Pauses background work and file deletions (and queues new I/O) until resume(). */
    suspend(): Promise<void>;
    resume(): Promise<void>;
  }

  export = RocksDB;
}
