import type { Logger } from 'pino';

/** How often due deployments are looked for; each is looked at once per its own interval. */
export const DUE_LOOK_SCAN_MS = 1_000;
/** Deployments looked at per scan; the rest wait for the next. */
const BATCH = 50;

export interface DueLooks {
  /** Deployments whose next look is due, at most `limit` (claims nothing: each look claims its own row). */
  due(limit: number): Promise<readonly { readonly tenantId: string; readonly deploymentId: string }[]>;
  /** One look at one deployment. */
  look(tenantId: string, deploymentId: string): Promise<void>;
}

/**
 * The loop of a controller that looks at deployments on their own schedules (the partitioner, the autoscaler). Every
 * control-plane instance runs it: which deployments are due lives in Postgres, and each look claims the deployment's
 * row and moves its next look one interval on before anything else, so a deployment is looked at once per interval
 * whichever instances run. A look that fails (Redis or Postgres away) is logged and rolled back, and the next scan
 * tries again.
 */
export class DueLookLoop {
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private stopped = false;

  constructor(
    /** The controller, as logs name it. */
    private readonly name: string,
    private readonly looks: DueLooks,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.scan(), DUE_LOOK_SCAN_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.scanning;
  }

  /** One scan over due deployments; a scan still running when the next is due makes that one a no-op. */
  scan(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.scanning ??= this.scanOnce()
      .catch((err: Error) => this.logger.warn({ err: { name: err.name, message: err.message } }, `${this.name} scan failed`))
      .finally(() => {
        this.scanning = undefined;
      });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    for (const { tenantId, deploymentId } of await this.looks.due(BATCH)) {
      if (this.stopped) return;
      try {
        await this.looks.look(tenantId, deploymentId);
      } catch (err) {
        const { name, message } = err as Error;
        this.logger.warn({ tenantId, deploymentId, err: { name, message } }, `a ${this.name} look failed; will retry`);
      }
    }
  }
}
