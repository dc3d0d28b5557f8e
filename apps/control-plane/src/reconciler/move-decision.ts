import { moveReportSchema, type MoveReport } from '@weir/protocol';
import type { DeploymentRun } from '../deployments/deployment';
import type { KeyGroupMove } from '../moves/key-group-move';
import type { CommandState } from '../placement/command-gateway';

/**
 * How long after its first send a move's command can still be found on the worker's queue: BullMQ keeps completed
 * jobs a day (libs/protocol's dispatcher), so a command missing later than this may have run; sending it again could
 * move key groups that already moved. Less than a day, so that a completed command is always read back before.
 */
export const MOVE_COMMAND_KEPT_MS = 20 * 3600_000;

export type MoveDecision =
  | { readonly kind: 'send' }
  | { readonly kind: 'wait' }
  | { readonly kind: 'done'; readonly report: MoveReport }
  | { readonly kind: 'failed'; readonly failure: string };

export interface MoveFacts {
  readonly move: KeyGroupMove;
  /** The run the move is for, as recorded; null if it is gone. */
  readonly moveRun: DeploymentRun | null;
  /** The deployment's latest run number: a later one means the move's run was replaced. */
  readonly latestRunNo: number;
  /** The command on process 0's worker's queue; null when Redis did not answer. */
  readonly command: CommandState | null;
  readonly now: Date;
}

/**
 * The next step for the deployment's move in flight, decided where the reconciler holds the deployment's row (so
 * one instance at a time, and never concurrently with a placement that reads the routing):
 * - the worker's answer settles it: its report makes it DONE, its failure FAILED;
 * - a move is DONE only while its run is the deployment's latest: once a later run is placed (with the routing before
 *   the move), a report read late is FAILED, so the routing recorded is always the one later runs start with;
 * - a run that ended before the move completed makes it FAILED, saying so;
 * - a command not on the queue (never sent, or a crash between send and commit, or Redis lost it) is sent again under
 *   its one key; one missing long after it went out is FAILED rather than repeated.
 */
export function decideMove({ move, moveRun, latestRunNo, command, now }: MoveFacts): MoveDecision {
  const replaced = latestRunNo !== move.runNo;
  if (command?.kind === 'failed') return { kind: 'failed', failure: `process 0's worker ${moveRun?.workerId ?? '?'} refused or failed it: ${command.reason}` };
  if (command?.kind === 'completed') {
    const report = readReport(move, command.result);
    if (typeof report === 'string') return { kind: 'failed', failure: `process 0's worker ${moveRun?.workerId ?? '?'} answered with ${report}` };
    if (replaced) return { kind: 'failed', failure: `run ${move.runNo} was replaced by run ${latestRunNo} before the move's report was read; run ${latestRunNo} started with the routing before it` };
    return { kind: 'done', report };
  }
  if (replaced || !moveRun || moveRun.endedAt) return { kind: 'failed', failure: `run ${move.runNo} ended before the move completed${endOf(moveRun)}` };
  if (!command || command.kind === 'queued') return { kind: 'wait' };
  if (move.startedAt && now.getTime() - move.startedAt.getTime() > MOVE_COMMAND_KEPT_MS) {
    return { kind: 'failed', failure: `its command is no longer on worker ${moveRun.workerId}'s queue, ${Math.round((now.getTime() - move.startedAt.getTime()) / 3600_000)} h after it was sent: its outcome is unknown` };
  }
  return { kind: 'send' };
}

/** The worker's report, checked against the move it answers; a string says what is wrong with it. */
function readReport(move: KeyGroupMove, result: unknown): MoveReport | string {
  const parsed = moveReportSchema.safeParse(result);
  if (!parsed.success) return 'a result that is not a move report';
  const report = parsed.data;
  if (report.moveId !== move.moveId || report.operatorId !== move.operatorId) return `the report of another move (${report.moveId} of ${report.operatorId})`;
  const asked = new Map(move.moves.map((m) => [m.keyGroup, m.toSubtask]));
  const stray = report.moved.find((m) => asked.get(m.keyGroup) !== m.toSubtask);
  if (stray) return `a report moving key group ${stray.keyGroup} to subtask ${stray.toSubtask}, which the move did not ask for`;
  return report;
}

function endOf(run: DeploymentRun | null): string {
  if (!run?.endedAt) return '';
  return ` (${run.outcome ?? 'ended'}${run.endReason ? `: ${run.endReason}` : ''})`;
}
