import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { BlobStoreError } from '@weir/blob';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { canonicalJson } from '../idempotency/fingerprint';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { toPage, type Page } from '../pagination/cursor';
import { NotFoundProblem, ProblemException } from '../problems/problem.exception';
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
import { ClientGoneError, MAX_MANIFEST_BYTES, receiveBundleParts } from './multipart-bundle';

/** Boundaries and part headers: generous, so a body that passes this check can still be cut off by the stream. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

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
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Streams a multipart upload to S3 and records it. Nothing is left behind on failure: the staging object is
   * removed whatever happens, the final object exists only if the row committed (it is written inside the row's
   * transaction and removed if that fails). With an Idempotency-Key, a repeat of the same manifest and bytes gets the
   * first response; the same key with another manifest or other bytes is a 422.
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
      if (idempotencyKey === undefined) return { statusCode: 201, body: BundleDto.from(await this.record(tenantId, manifest, stored)), replayed: false };
      const fingerprint = createHash('sha256').update(`POST /v1/bundles\n${canonicalJson(manifest)}\n${stored.sha256}`).digest('hex');
      const claim = await this.idempotency.begin(tenantId, idempotencyKey, fingerprint);
      if (claim.kind === 'replay') return { statusCode: claim.statusCode, body: claim.body as BundleDto, replayed: true };
      try {
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
    return err;
  }
}
