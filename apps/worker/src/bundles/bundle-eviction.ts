/** One cached bundle as eviction sees it: its file name, size and last use (mtime, refreshed on each hit). */
export interface CachedBundle {
  readonly name: string;
  readonly size: number;
  readonly mtimeMs: number;
}

export interface EvictionInput {
  readonly files: readonly CachedBundle[];
  /** File names of the bundles jobs on this worker run or are starting with. */
  readonly inUse: ReadonlySet<string>;
  /** The file name of the bundle just downloaded: its fetch is about to hand it to a job. */
  readonly justFetched: string;
  readonly maxBytes: number;
}

/**
 * Which bundles to delete so that the cache fits in `maxBytes`: the least recently used first, never one in
 * `inUse` nor the one just fetched. When those alone exceed the cap, everything else goes and the cache stays over
 * it: a bundle a job needs is worth more than the cap.
 */
export function chooseEvictions({ files, inUse, justFetched, maxBytes }: EvictionInput): string[] {
  let total = files.reduce((sum, f) => sum + f.size, 0);
  if (total <= maxBytes) return [];
  const candidates = files
    .filter((f) => f.name !== justFetched && !inUse.has(f.name))
    .sort((a, b) => a.mtimeMs - b.mtimeMs || a.name.localeCompare(b.name));
  const evicted: string[] = [];
  for (const file of candidates) {
    if (total <= maxBytes) break;
    evicted.push(file.name);
    total -= file.size;
  }
  return evicted;
}
