import { assertParallelism } from '../keygroups';
import type { JobDefinition } from './graph';
import { GraphBuilder, JobDefinitionError, StreamBuilder } from './stream';

export interface JobOptions {
  readonly name: string;
  /** Key groups per keyed operator (the upper bound of its parallelism). Default 128. */
  readonly maxParallelism?: number;
}

/** What a bundle exports: `export default defineJob({ name: 'fraud' }, (b) => { ... })`. */
export function defineJob(options: JobOptions, build: (builder: StreamBuilder) => void): JobDefinition {
  const maxParallelism = options.maxParallelism ?? 128;
  assertParallelism(1, maxParallelism);
  if (!options.name) throw new JobDefinitionError('a job needs a name');
  const graph = new GraphBuilder();
  build(new StreamBuilder(graph));
  if (!graph.nodes.some((n) => n.kind === 'source')) throw new JobDefinitionError(`job "${options.name}" has no source`);
  if (!graph.nodes.some((n) => n.kind === 'sink')) throw new JobDefinitionError(`job "${options.name}" has no sink`);
  for (const node of graph.nodes) {
    if (node.kind === 'keyBy' && !graph.nodes.some((n) => 'input' in n && n.input === node.id)) {
      throw new JobDefinitionError(`keyBy "${node.id}" is not followed by process(), window() or connect()`);
    }
  }
  return Object.freeze({ name: options.name, maxParallelism, nodes: Object.freeze([...graph.nodes]) });
}
