import type { LoadModel, PartitionLayout, PartitioningDecision, PartitioningPolicy } from '@weir/partitioner';
import type { Detection, HotKey, OverloadedSubtask } from './scaling-decision';

/**
 * A key carrying this share of a subtask's fair load is flagged hot: the same fraction below which a split key folds
 * back (the policy's default foldBackBelow), so what is flagged is what would stay split once splitting is wired.
 */
export const HOT_KEY_OF_FAIR_LOAD = 0.5;
/** Key groups named per overloaded subtask, heaviest first. */
const TOP_KEY_GROUPS = 3;

/**
 * What the decision saw: every subtask above `actAbove` × its fair load (with its heaviest key groups), and every
 * heavy key at or above half a subtask's fair load (with its rate, share and the sketch's error bound). Pure: the
 * figures are the decision's own and the load model's.
 */
export function detect(layout: PartitionLayout, load: LoadModel, decision: PartitioningDecision, policy: Pick<PartitioningPolicy, 'actAbove'>): Detection {
  const overloadedSubtasks: OverloadedSubtask[] = [];
  decision.loadsBefore.forEach((subtaskLoad, subtask) => {
    const fairLoad = decision.fairLoads[subtask];
    const ratio = fairLoad > 0 ? subtaskLoad / fairLoad : 0;
    if (!(ratio > policy.actAbove)) return;
    const topKeyGroups = layout.owners
      .map((owner, keyGroup) => ({ owner, keyGroup, rate: load.keyGroupRates[keyGroup] }))
      .filter((g) => g.owner === subtask && g.rate > 0)
      .sort((a, b) => b.rate - a.rate || a.keyGroup - b.keyGroup)
      .slice(0, TOP_KEY_GROUPS)
      .map(({ keyGroup, rate }) => ({ keyGroup, rate }));
    overloadedSubtasks.push({ subtask, load: subtaskLoad, fairLoad, ratio, capacity: load.capacities[subtask] ?? null, topKeyGroups });
  });
  const total = load.keyGroupRates.reduce((a, r) => a + r, 0);
  const meanFair = decision.fairLoads.reduce((a, f) => a + f, 0) / Math.max(1, decision.fairLoads.length);
  const hotKeys: HotKey[] = load.keyRates
    .filter((k) => meanFair > 0 && k.rate >= HOT_KEY_OF_FAIR_LOAD * meanFair)
    .map((k) => ({ key: k.key, keyGroup: k.keyGroup, rate: k.rate, share: total > 0 ? k.rate / total : 0, ofFairLoad: k.rate / meanFair, error: k.error, subtask: layout.owners[k.keyGroup] }));
  return { overloadedSubtasks, hotKeys };
}
