import { CachedStateBackend } from '../backend/cached-state-backend';
import type { KeyedStateBackend } from '../contract';
import { StateBackendConfigError } from '../errors';
import type { KeyGroupRange } from './local-checkpoint';

export interface CopyKeyGroupsResult {
  readonly entries: number;
  readonly bytes: number;
}

/**
 * Replaces key groups `ranges` of `to` with those of `from` (restoring at another parallelism: a restored
 * subtask store holds some key groups, the new subtask needs some of them). Key groups are contiguous key
 * ranges, so each range is one range delete in `to` and one ordered scan of `from`, written in the scan's chunks.
 * Expired values are not copied. Both backends' queues are held for the whole copy; `to`'s cached entries of the
 * ranges (dirty ones included) are dropped.
 */
export async function copyKeyGroups(
  from: KeyedStateBackend,
  to: KeyedStateBackend,
  ranges: readonly KeyGroupRange[],
): Promise<CopyKeyGroupsResult> {
  if (!(from instanceof CachedStateBackend) || !(to instanceof CachedStateBackend)) {
    throw new StateBackendConfigError('copyKeyGroups needs backends made by createStateBackend');
  }
  if (from === to) throw new StateBackendConfigError('copyKeyGroups needs two different backends');
  let entries = 0;
  let bytes = 0;
  await to.exclusive((target) =>
    from.exclusive(async (source) => {
      await source.flush();
      await target.flush();
      for (const range of ranges) {
        await target.clear(range);
        for await (const chunk of source.scan(range)) {
          await target.write(chunk);
          entries += chunk.length;
          for (const { key, value } of chunk) bytes += key.length + value.length;
        }
      }
    }),
  );
  return { entries, bytes };
}
