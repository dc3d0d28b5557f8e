import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { BlobStoreError } from '@weir/blob';
import { BundleInspector, BundleRefusedError, SandboxUnavailableError } from '@weir/sandbox';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { canonicalJson } from '../idempotency/fingerprint';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { toPage, type Page } from '../pagination/cursor';
import { InvalidRequestProblem, NotFoundProblem, ProblemException } from '../problems/problem.exception';
import { PROBLEM_TYPES } from '../problems/problem-details';
import { QuotaService } from '../tenancy/quota.service';
import { TenantDb } from '../tenancy/tenant-db';
import { bundleObjectKey, newBundleId, stagingObjectKey, type Bundle } from './bundle';
import { BundleTooLargeProblem, BundleVersionExistsProblem } from './bundle.problems';
import { BundleStorage, type StoredObject } from './bundle-storage';
import { BundlesRepository } from './bundles.repository';
import { SizeLimitExceededError } from './digesting-limiter';
import { BundleDto } from './dto/bundle.dto';
import { encodeBundleKey } from './dto/bundle.input';
import { parseManifestField, type BundleManifest } from './manifest';
import { manifestProblems } from './manifest-check';
import { ClientGoneError, MAX_MANIFEST_BYTES, receiveBundleParts } from './multipart-bundle';

/** Boundaries and part headers: generous, so a body that passes this check can still be cut off by the stream. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** The largest bundle loaded in the sandbox at upload (its isolate holds the source and the job's graph). */
export const MAX_CHECKED_BUNDLE_BYTES = 32 * 1024 * 1024;

function declaredLength(req: IncomingMessage): number {
  const header = req.headers['content-length'];
  return header && /^\d{1,16}$/.test(header) ? Number(header) : 0;
}

export interface UploadResult {
  readonly statusCode: number;
  readonly body: BundleDto;
  readonly replayed: boolean;
}

@Injectable()
export class BundlesService {
  constructor(
    private readonly db: TenantDb,
    private readonly quotas: QuotaService,
    private readonly bundles: BundlesRepository,
    private readonly storage: BundleStorage,
    private readonly idempotency: IdempotencyService,
    private readonly inspector: BundleInspector,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Streams a multipart upload to S3 and records it. Nothing is left behind on failure: the staging object is
   * removed whatever happens, the final object exists only if the row committed (it is written inside the row's
   * transaction and removed if that fails). With an Idempotency-Key, a repeat of the same manifest and bytes gets the
   * first response; the same key with another manifest or other bytes is a 422. Before it is recorded the bundle is
   * loaded in the sandbox and the manifest checked against its job (checkAgainstCode): a 400 names what disagrees.
   */
  async upload(tenantId: string, req: IncomingMessage, idempotencyKey: string | undefined): Promise<UploadResult> {
    const { maxBundleBytes } = await this.db.readWith(tenantId, (client) => this.quotas.quotasOf(client, tenantId));
    if (declaredLength(req) > maxBundleBytes + MAX_MANIFEST_BYTES + MULTIPART_OVERHEAD_BYTES) {
      // Refused from its Content-Length alone: not one byte goes to S3.
      req.resume();
      throw new BundleTooLargeProblem(maxBundleBytes);
    }
    const { manifest, stored } = await receiveBundleParts<BundleManifest, StoredObject>(req, {
      parseManifest: parseManifestField,
      storeFile: async (file, m, signal) => {
        // Without a key a duplicate is refused before any byte is stored; with one it may be a replay (decided below).
        if (idempotencyKey === undefined && (await this.db.readWith(tenantId, (c) => this.bundles.exists(c, tenantId, m.name, m.version)))) {
          file.resume();
          throw new BundleVersionExistsProblem(m.name, m.version);
        }
        return this.storage.stage(file, stagingObjectKey(tenantId, m.name), maxBundleBytes, signal);
      },
    }).catch((err: unknown) => {
      throw this.toProblem(err, maxBundleBytes);
    });
    try {
      if (idempotencyKey === undefined) {
        await this.checkAgainstCode(manifest, stored);
        return { statusCode: 201, body: BundleDto.from(await this.record(tenantId, manifest, stored)), replayed: false };
      }
      const fingerprint = createHash('sha256').update(`POST /v1/bundles\n${canonicalJson(manifest)}\n${stored.sha256}`).digest('hex');
      const claim = await this.idempotency.begin(tenantId, idempotencyKey, fingerprint);
      if (claim.kind === 'replay') return { statusCode: claim.statusCode, body: claim.body as BundleDto, replayed: true };
      try {
        await this.checkAgainstCode(manifest, stored);
        const body = BundleDto.from(await this.record(tenantId, manifest, stored));
        await claim.complete(201, body);
        return { statusCode: 201, body, replayed: false };
      } catch (err) {
        await claim.release().catch(() => undefined);
        throw err;
      }
    } catch (err) {
      throw this.toProblem(err, maxBundleBytes);
    } finally {
      await this.storage.remove(stored.key);
    }
  }

  async list(tenantId: string, limit: number, after: readonly [string, string] | undefined, name: string | undefined): Promise<Page<Bundle>> {
    const rows = await this.db.readWith(tenantId, (client) => this.bundles.list(client, tenantId, limit + 1, after, name));
    return toPage(rows, limit, (b) => encodeBundleKey(b.name, b.version));
  }

  async get(tenantId: string, id: string): Promise<Bundle> {
    const bundle = await this.db.readWith(tenantId, (client) => this.bundles.findById(client, tenantId, id));
    if (!bundle) throw new NotFoundProblem('bundle', id);
    return bundle;
  }

  async getVersion(tenantId: string, name: string, version: string): Promise<Bundle> {
    const bundle = await this.db.readWith(tenantId, (client) => this.bundles.findByVersion(client, tenantId, name, version));
    if (!bundle) throw new NotFoundProblem('bundle version', `${name}@${version}`);
    return bundle;
  }

  /** Deletes the row (refused while a deployment uses it), then its object. */
  async delete(tenantId: string, id: string): Promise<void> {
    const deleted = await this.db.run(tenantId, (client) => this.bundles.delete(client, tenantId, id));
    if (!deleted) throw new NotFoundProblem('bundle', id);
    await this.storage.remove(deleted.s3Key);
  }

  /**
   * Loads the staged bundle in the sandbox (libs/sandbox: an isolate in a process that can reach nothing) and checks
   * the manifest's operator ids and maxParallelism against the job it exports. A bundle that fails to load, exports
   * no job or outruns the sandbox's limits is refused with the reason, as is a manifest that disagrees with it.
   */
  private async checkAgainstCode(manifest: BundleManifest, stored: StoredObject): Promise<void> {
    if (stored.sizeBytes > MAX_CHECKED_BUNDLE_BYTES) {
      throw new InvalidRequestProblem([
        { in: 'body', name: 'bundle', reason: `is ${stored.sizeBytes} bytes; a bundle is checked at upload only up to ${MAX_CHECKED_BUNDLE_BYTES} bytes (leave data files out of it)` },
      ]);
    }
    let facts;
    try {
      facts = await this.inspector.inspect(await this.storage.readStaged(stored));
    } catch (err) {
      if (err instanceof BundleRefusedError) throw new InvalidRequestProblem([{ in: 'body', name: 'bundle', reason: err.message }]);
      throw err;
    }
    const problems = manifestProblems(manifest, facts);
    if (problems.length > 0) throw new InvalidRequestProblem(problems);
  }

  /** Row and final object together: the object is written inside the row's transaction and removed if it fails. */
  private async record(tenantId: string, manifest: BundleManifest, stored: StoredObject): Promise<Bundle> {
    const s3Key = bundleObjectKey(tenantId, manifest.name, manifest.version, stored.sha256);
    return this.db.run(tenantId, async (client) => {
      const bundle = await this.bundles.insert(client, {
        id: newBundleId(),
        tenantId,
        name: manifest.name,
        version: manifest.version,
        sha256: stored.sha256,
        sizeBytes: stored.sizeBytes,
        s3Key,
        manifest,
      });
      // The row's unique index is held until commit, so no concurrent upload of this version writes this key.
      await this.storage.promote(stored, s3Key);
      return bundle;
    }).catch(async (err: unknown) => {
      if (!(err instanceof BundleVersionExistsProblem)) await this.storage.remove(s3Key);
      throw err;
    });
  }

  private toProblem(err: unknown, maxBundleBytes: number): unknown {
    if (err instanceof SizeLimitExceededError) return new BundleTooLargeProblem(maxBundleBytes);
    if (err instanceof ClientGoneError) {
      // Nobody reads the answer; a 4xx keeps it out of the error log (it is the client's doing, and cleaned up).
      this.logger.info('bundle upload abandoned by the client; nothing kept');
      return new ProblemException(400, 'urn:weir:problem:client-closed-request', 'Client closed request', err.message);
    }
    if (err instanceof BlobStoreError) {
      this.logger.error({ err: { name: err.name, message: err.message } }, 'bundle upload: object storage failed');
      return new ProblemException(503, PROBLEM_TYPES.unavailable, 'Service Unavailable', 'Object storage is unavailable; nothing was stored. Retry later.');
    }
    if (err instanceof SandboxUnavailableError) {
      this.logger.error({ err: { name: err.name, message: err.message } }, 'bundle upload: the bundle check could not run');
      return new ProblemException(503, PROBLEM_TYPES.unavailable, 'Service Unavailable', 'The bundle could not be checked; nothing was stored. Retry later.');
    }
    return err;
  }
}
