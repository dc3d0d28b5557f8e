/** What a bundle's code says about its job, read by loading it in the sandbox: the manifest is checked against it. */
export interface BundleFacts {
  /** The job's own name (defineJob's `name`), which need not be the bundle's. */
  readonly jobName: string;
  readonly maxParallelism: number;
  /** The job's operator ids in graph order (operatorIdsOf: derived `a#b` nodes left out). */
  readonly operatorIds: readonly string[];
  /** Built from its parameter declaration with sample values: its operator ids must not depend on them. */
  readonly parameterized: boolean;
  /** The rules schema the job declares (StreamBuilder.rulesSchema), built with its properties' defaults; null: none. */
  readonly rulesSchema: Readonly<Record<string, unknown>> | null;
}

/** The bundle itself is at fault: it does not load, exports no job, or outruns the sandbox's limits. */
export class BundleRefusedError extends Error {
  override readonly name = 'BundleRefusedError';
}

/** The sandbox could not run (it failed to start, or died for a reason of the platform's): not the bundle's fault. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}
