/**
 * The source of a small bundle whose job has exactly these operator ids (the first a source, the last a sink, maps
 * between), this maxParallelism and, if given, this rules schema: an upload the bundle check accepts with a manifest
 * that says the same.
 * `sizeBytes` pads it with a trailing comment to that exact size; `variant` gives other bytes for the same job.
 */
export function jobSource(options: { operatorIds: readonly string[]; maxParallelism: number; sizeBytes?: number; variant?: string; rulesSchema?: Record<string, unknown> }): Buffer {
  const [source, ...rest] = options.operatorIds;
  const sink = rest.pop() ?? 'sink';
  const maps = rest.map((id) => `.map(${JSON.stringify(id)}, (r) => r)`).join('');
  const code =
    `"use strict";\nconst { defineJob, memorySource, memorySink } = require('@weir/engine');\n` +
    `module.exports = { default: defineJob({ name: 'test-job', maxParallelism: ${options.maxParallelism} }, (job) => {\n` +
    (options.rulesSchema ? `  job.rulesSchema(${JSON.stringify(options.rulesSchema)});\n` : '') +
    `  job.source(${JSON.stringify(source)}, memorySource())${maps}.sink(${JSON.stringify(sink)}, memorySink()); }) };\n` +
    (options.variant ? `// ${options.variant}\n` : '');
  if (options.sizeBytes === undefined) return Buffer.from(code);
  const padding = options.sizeBytes - Buffer.byteLength(code) - 4;
  if (padding < 0) throw new Error(`a job source is at least ${Buffer.byteLength(code) + 4} bytes`);
  return Buffer.from(`${code}/*${'x'.repeat(padding)}*/`);
}
