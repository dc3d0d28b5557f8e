import { rescaleProgressSchema, rescaleReportSchema, type RescaleProgress, type RescaleReport } from '@weir/protocol';
import type { LiveRescale } from '../deployments/deployment';
import type { CommandState } from '../placement/command-gateway';
import { MOVE_COMMAND_KEPT_MS } from './move-decision';

export type RescaleCommandDecision =
  | { readonly kind: 'send' }
  | { readonly kind: 'wait'; readonly progress: RescaleProgress | null }
  | { readonly kind: 'done'; readonly report: RescaleReport }
  | { readonly kind: 'fall-back'; readonly reason: string };

export interface RescaleCommandFacts {
  readonly rescale: Pick<LiveRescale, 'rescaleId' | 'toProcesses' | 'startedAt'>;
  /** Process 0's worker, to name it. */
  readonly workerId: string;
  /** The rescale-run command on process 0's worker's queue; null when Redis did not answer. */
  readonly command: CommandState | null;
  readonly now: Date;
}

/**
 * The next step for a live rescale whose rescale-run command went out (MOVING), from that command's state:
 * - queued or running: wait, with the progress process 0 published (unchecked input: dropped when malformed);
 * - completed: its RescaleReport, checked against the rescale it answers; a report that is not one is a fall-back;
 * - failed: process 0 refused it (a change live moves cannot make) or gave up: fall back to the restart, which
 *   restores the latest checkpoint at the new parallelism whatever the rescale did before it failed;
 * - missing: never sent (a crash between send and commit) or lost by Redis: sent again under its one key, unless it
 *   went out longer ago than the queue keeps a completed command, when it may have run: then the restart, which is
 *   right whatever it did.
 */
export function decideRescaleCommand({ rescale, workerId, command, now }: RescaleCommandFacts): RescaleCommandDecision {
  if (!command) return { kind: 'wait', progress: null };
  switch (command.kind) {
    case 'queued': {
      const progress = rescaleProgressSchema.safeParse(command.progress);
      return { kind: 'wait', progress: progress.success ? progress.data : null };
    }
    case 'failed':
      return { kind: 'fall-back', reason: `process 0's worker ${workerId} refused it: ${command.reason}` };
    case 'completed': {
      const report = readReport(rescale, command.result);
      if (typeof report === 'string') return { kind: 'fall-back', reason: `process 0's worker ${workerId} answered with ${report}` };
      return { kind: 'done', report };
    }
    case 'missing': {
      const sentMs = rescale.startedAt ? now.getTime() - rescale.startedAt.getTime() : 0;
      if (sentMs > MOVE_COMMAND_KEPT_MS) {
        return { kind: 'fall-back', reason: `its command is no longer on worker ${workerId}'s queue, ${Math.round(sentMs / 3600_000)} h after it was sent: its outcome is unknown` };
      }
      return { kind: 'send' };
    }
  }
}

/** The worker's report, checked against the rescale it answers; a string says what is wrong with it. */
function readReport(rescale: RescaleCommandFacts['rescale'], result: unknown): RescaleReport | string {
  const parsed = rescaleReportSchema.safeParse(result);
  if (!parsed.success) return 'a result that is not a rescale report';
  const report = parsed.data;
  if (report.rescaleId !== rescale.rescaleId) return `the report of another rescale (${report.rescaleId})`;
  if (report.processes !== rescale.toProcesses) return `a report of ${report.processes} processes where ${rescale.toProcesses} were asked for`;
  return report;
}
