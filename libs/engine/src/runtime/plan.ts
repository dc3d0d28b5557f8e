/**
 * Turns a JobDefinition into stages: a stage starts at a source or at a keyed operator and holds every operator
 * chained behind it through forward edges. keyBy and broadcast edges connect stages through exchanges.
 */
import { JobDefinitionError } from '../sdk/stream';
import type { JobDefinition, KeyedOperatorNode, NodeSpec } from '../sdk/graph';

export type SourceNode = Extract<NodeSpec, { kind: 'source' }>;

export interface StagePlan {
  readonly id: string;
  readonly root: SourceNode | KeyedOperatorNode;
  readonly parallelism: number;
  /** For keyed stages: the stage feeding the keyBy edge and how many channels it has. */
  readonly dataInput?: { readonly stageId: string; readonly keyBy: Extract<NodeSpec, { kind: 'keyBy' }> };
  readonly broadcastInput?: { readonly stageId: string };
}

export interface JobPlan {
  readonly stages: readonly StagePlan[];
  /** Node id → nodes reading from it (forward edges, keyBy edges and side outputs alike). */
  readonly children: ReadonlyMap<string, readonly NodeSpec[]>;
  readonly nodes: ReadonlyMap<string, NodeSpec>;
}

export type ParallelismOption = number | { readonly default: number; readonly [stageRootId: string]: number };

export function planJob(definition: JobDefinition, parallelism: ParallelismOption, sourceParallelism: (node: SourceNode, asked: number) => number): JobPlan {
  const nodes = new Map(definition.nodes.map((n) => [n.id, n]));
  const children = new Map<string, NodeSpec[]>();
  for (const n of definition.nodes) {
    for (const input of inputsOf(n)) {
      if (!nodes.has(input)) throw new JobDefinitionError(`operator "${n.id}" reads from unknown "${input}"`);
      const list = children.get(input) ?? [];
      list.push(n);
      children.set(input, list);
    }
  }
  const stageOf = (id: string): string => {
    const n = nodes.get(id)!;
    if (n.kind === 'source' || n.kind === 'process' || n.kind === 'broadcastProcess' || n.kind === 'window') return n.id;
    return stageOf((n as { input: string }).input);
  };
  const asked = (id: string) => (typeof parallelism === 'number' ? parallelism : (parallelism[id] ?? parallelism.default));
  const stages: StagePlan[] = [];
  for (const n of definition.nodes) {
    if (n.kind === 'source') {
      stages.push({ id: n.id, root: n, parallelism: sourceParallelism(n, asked(n.id)) });
    } else if (n.kind === 'process' || n.kind === 'window' || n.kind === 'broadcastProcess') {
      const keyBy = nodes.get(n.input);
      if (!keyBy || keyBy.kind !== 'keyBy') throw new JobDefinitionError(`keyed operator "${n.id}" must follow keyBy`);
      const p = asked(n.id);
      if (p > definition.maxParallelism) {
        throw new JobDefinitionError(`operator "${n.id}": parallelism ${p} exceeds maxParallelism ${definition.maxParallelism}`);
      }
      stages.push({
        id: n.id,
        root: n,
        parallelism: p,
        dataInput: { stageId: stageOf(keyBy.input), keyBy },
        broadcastInput: n.kind === 'broadcastProcess' ? { stageId: stageOf(n.broadcastInput) } : undefined,
      });
    }
  }
  return { stages, children, nodes };
}

function inputsOf(n: NodeSpec): string[] {
  if (n.kind === 'source') return [];
  if (n.kind === 'broadcastProcess') return [n.input, n.broadcastInput];
  return [n.input];
}

/** A splittable window's first operator (WindowOptions.splittable): the one stage whose hot keys may be split. */
export function isSplittable(stage: StagePlan): boolean {
  return stage.root.kind === 'window' && stage.root.phase === 'partials';
}

/**
 * A Kafka source whose every output goes through a keyBy can change its number of subtasks while the job runs (a
 * live rescale): its partitions move between subtasks between two checkpoints, and every keyed subtask it feeds
 * aligns over the new count from the first barrier that says it. Not with a sink chained behind it (its output's
 * order per key would depend on two writers) or a broadcast edge (a broadcast input's channels stay fixed).
 */
export function sourceRescalesLive(plan: JobPlan, stage: StagePlan): boolean {
  if (stage.root.kind !== 'source' || stage.root.spec.kind !== 'kafka') return false;
  const onlyKeyed = (id: string): boolean =>
    (plan.children.get(id) ?? []).every((child) => {
      if (child.kind === 'keyBy') return true;
      if (child.kind === 'map' || child.kind === 'filter' || child.kind === 'flatMap') return onlyKeyed(child.id);
      return false;
    });
  return onlyKeyed(stage.id);
}
