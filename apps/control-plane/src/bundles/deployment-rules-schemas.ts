import { Inject, Injectable } from '@nestjs/common';
import type { BlobStore } from '@weir/blob';
import { BundleInspector } from '@weir/sandbox';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { BLOB_STORE } from '../infrastructure/tokens';

/** How many (bundle, config) schemas a control plane keeps: a deployment's changes only with its bundle or config. */
const CACHED = 256;

export interface SchemaSource {
  readonly deploymentId: string;
  readonly bundle: { readonly key: string; readonly sha256: string };
  readonly config: { readonly topics?: Readonly<Record<string, string>>; readonly properties?: Readonly<Record<string, string>> };
  /** The bundle's (its manifest's, checked at upload against the job built with its defaults). */
  readonly bundleSchema: Record<string, unknown>;
}

/**
 * The rules schema of one deployment: what its job declares when built with the deployment's config, in the
 * sandbox (a parameterized job's schema may depend on its properties: the fraud job's window limit is its
 * `max-window-ms`). So a rule the deployment's job would refuse is refused by the API, with the field named. Falls
 * back to the bundle's schema when the job declares none, or the sandbox cannot answer (logged): the job still checks
 * every rule itself.
 */
@Injectable()
export class DeploymentRulesSchemas {
  private readonly cache = new Map<string, Promise<Record<string, unknown> | null>>();

  constructor(
    private readonly inspector: BundleInspector,
    @Inject(BLOB_STORE) private readonly blob: BlobStore,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  async of(source: SchemaSource): Promise<Record<string, unknown>> {
    return (await this.read(source)) ?? source.bundleSchema;
  }

  /** Reads it ahead (a new deployment), so that its first rule set does not wait for the sandbox. */
  warm(source: Omit<SchemaSource, 'bundleSchema'>): void {
    void this.read(source);
  }

  private read(source: Omit<SchemaSource, 'bundleSchema'>): Promise<Record<string, unknown> | null> {
    // Sorted: the config read back from Postgres (jsonb) has its keys in another order than the one it was sent in.
    const sorted = (o: Readonly<Record<string, string>> = {}) => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const id = `${source.bundle.sha256}\n${JSON.stringify([sorted(source.config.topics), sorted(source.config.properties)])}`;
    let schema = this.cache.get(id);
    if (!schema) {
      schema = this.inspect(source, id);
      this.cache.set(id, schema);
      if (this.cache.size > CACHED) this.cache.delete(this.cache.keys().next().value!);
    }
    return schema;
  }

  private async inspect(source: Omit<SchemaSource, 'bundleSchema'>, id: string): Promise<Record<string, unknown> | null> {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of await this.blob.get(source.bundle.key)) chunks.push(Buffer.from(chunk as Uint8Array));
      const facts = await this.inspector.inspect(Buffer.concat(chunks), source.config);
      return facts.rulesSchema ? { ...facts.rulesSchema } : null;
    } catch (err) {
      this.logger.warn({ deploymentId: source.deploymentId, err: (err as Error).message }, "the deployment's own rules schema could not be read; validating against the bundle's");
      // Not kept: the next rule set asks again.
      this.cache.delete(id);
      return null;
    }
  }
}
