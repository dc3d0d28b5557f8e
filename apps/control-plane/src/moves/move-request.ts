import { z } from 'zod';
import type { Routing } from '../deployments/deployment';
import type { InvalidParameter } from '../problems/problem-details';
import type { KeyGroupMoveStep } from './key-group-move';

/** The key-group count's ceiling (the manifest's and the protocol's). */
const MAX_KEY_GROUPS = 32_768;
const index = (what: string) =>
  z.number({ error: `must be a ${what}: an integer from 0` }).int(`must be a ${what}: an integer from 0`).min(0, `must be a ${what}: an integer from 0`);

/** `POST /v1/deployments/{id}/key-group-moves`, as far as it can be checked without the deployment. */
export const moveKeyGroupsBody = z.strictObject(
  {
    operatorId: z.string({ error: 'is required' }).regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an operator id: 1-64 of A-Z, a-z, 0-9, "_" or "-"'),
    moves: z
      .array(z.strictObject({ keyGroup: index('key group').max(MAX_KEY_GROUPS - 1, `must be below ${MAX_KEY_GROUPS}`), toSubtask: index('subtask index') }), {
        error: 'must be an array of { keyGroup, toSubtask }',
      })
      .min(1, 'must move at least one key group')
      .max(MAX_KEY_GROUPS, `must move at most ${MAX_KEY_GROUPS} key groups`),
    reason: z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').optional(),
  },
  { error: 'must be a JSON object: { operatorId, moves, reason? }' },
);
export type MoveKeyGroupsBody = z.infer<typeof moveKeyGroupsBody>;

/** What a move is checked against: the running run's bundle, its subtasks per operator and its current routing. */
export interface MoveTarget {
  /** `name@version`, for messages. */
  readonly bundle: string;
  /** The operators the manifest lists (it does not say which are keyed: the worker refuses a move of another). */
  readonly operatorIds: readonly string[];
  readonly maxParallelism: number;
  /** Subtasks per operator in the run. */
  readonly parallelism: Readonly<Record<string, number>>;
  readonly routing: Routing;
}

export type ResolvedMoves = { readonly ok: true; readonly moves: KeyGroupMoveStep[] } | { readonly ok: false; readonly errors: InvalidParameter[] };

/**
 * Checks a move against the run and resolves each key group's current owner (`fromSubtask`): every problem is a
 * 400 naming its field as parseInput does (`operatorId`, `moves.2.keyGroup`, `moves.0.toSubtask`), all at once.
 */
export function resolveMoves(body: MoveKeyGroupsBody, target: MoveTarget): ResolvedMoves {
  const errors: InvalidParameter[] = [];
  const bad = (name: string, reason: string) => errors.push({ in: 'body', name, reason });
  const owners = target.routing[body.operatorId];
  if (!target.operatorIds.includes(body.operatorId) || !owners) {
    bad('operatorId', `is not an operator of bundle ${target.bundle} (operators: ${target.operatorIds.join(', ')})`);
    return { ok: false, errors };
  }
  const parallelism = target.parallelism[body.operatorId] ?? 1;
  const firstAt = new Map<number, number>();
  const moves: KeyGroupMoveStep[] = [];
  body.moves.forEach(({ keyGroup, toSubtask }, i) => {
    const at = `moves.${i}`;
    if (keyGroup >= target.maxParallelism) {
      bad(`${at}.keyGroup`, `key group ${keyGroup} does not exist: bundle ${target.bundle} has ${target.maxParallelism} key groups (0 to ${target.maxParallelism - 1})`);
      return;
    }
    const first = firstAt.get(keyGroup);
    if (first !== undefined) {
      bad(`${at}.keyGroup`, `key group ${keyGroup} is moved by moves.${first} already; name each key group once`);
      return;
    }
    firstAt.set(keyGroup, i);
    if (toSubtask >= parallelism) {
      bad(`${at}.toSubtask`, `operator ${body.operatorId} runs ${parallelism} subtask${parallelism === 1 ? '' : 's'} (0 to ${parallelism - 1}), so there is no subtask ${toSubtask}`);
      return;
    }
    const fromSubtask = owners[keyGroup];
    if (fromSubtask === toSubtask) {
      bad(`${at}.toSubtask`, `key group ${keyGroup} of operator ${body.operatorId} is on subtask ${toSubtask} already`);
      return;
    }
    moves.push({ keyGroup, fromSubtask, toSubtask });
  });
  return errors.length ? { ok: false, errors } : { ok: true, moves };
}
