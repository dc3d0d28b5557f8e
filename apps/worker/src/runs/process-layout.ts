/**
 * Which subtasks a job host process of a run runs, and which restored sink epochs it commits. A run over `count`
 * processes runs subtask i of every operator in process i (the control plane's layout: one slot per process).
 */
export interface ProcessLayout {
  readonly index: number;
  readonly count: number;
}

/**
 * The engine's `subtasks` option for this process: every stage named, with this process's indexes of it (none for a
 * stage this process runs no subtask of). A stage left unnamed would run all its subtasks here.
 */
export function localSubtasks(
  parallelism: Readonly<Record<string, number>>,
  assigned: Readonly<Record<string, readonly number[]>>,
): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const stageId of Object.keys(parallelism)) out[stageId] = [...(assigned[stageId] ?? [])];
  return out;
}

/**
 * A restored exactly-once sink epoch is committed by the process that runs its subtask now; one of a subtask no
 * process runs any more (restored at a lower parallelism) by process 0. Each epoch so has exactly one committer.
 */
export function ownsSinkEpoch(layout: ProcessLayout, subtask: number): boolean {
  return subtask === layout.index || (layout.index === 0 && subtask >= layout.count);
}
