import { Inject, Injectable } from '@nestjs/common';
import type { BlobStore } from '@weir/blob';
import { CheckpointStore, type CheckpointManifest } from '@weir/checkpoint';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../control-plane-options';
import { BLOB_STORE } from '../infrastructure/tokens';

/** One listing and one manifest read per look: bounded, so a slow S3 delays a look, never holds it. */
const S3_TIMEOUT_MS = 5_000;

/**
 * The job's latest checkpoint manifest, for the state bytes a move would hand over. Best effort: no checkpoint yet, S3
 * away or slow, or a manifest that cannot be read all answer null, and the decision counts state as unknown (0 bytes).
 */
@Injectable()
export class CheckpointSizes {
  private readonly store: CheckpointStore;
  private readonly logger: Logger;

  constructor(@Inject(BLOB_STORE) blob: BlobStore, @Inject(ROOT_LOGGER) logger: Logger) {
    this.store = new CheckpointStore(blob);
    this.logger = logger.child({ component: 'partitioner' });
  }

  async latestManifest(tenantId: string, jobId: string): Promise<CheckpointManifest | null> {
    const reading = this.store.latest({ tenantId, jobId }).then(
      (latest) => latest?.manifest ?? null,
      (err: Error) => {
        this.logger.debug({ tenantId, jobId, err: { name: err.name, message: err.message } }, 'could not read the latest checkpoint manifest; state bytes unknown');
        return null;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), S3_TIMEOUT_MS);
    });
    try {
      return await Promise.race([reading, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
