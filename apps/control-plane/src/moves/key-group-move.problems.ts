import { ProblemException } from '../problems/problem.exception';

export const MOVE_PROBLEM_TYPES = {
  inFlight: 'urn:weir:problem:key-group-move-in-flight',
} as const;

/** Moves are serialised per deployment: another one is still PENDING (the detail names it). */
export class KeyGroupMoveInFlightProblem extends ProblemException {
  override readonly name = 'KeyGroupMoveInFlightProblem';
  constructor(detail: string) {
    super(409, MOVE_PROBLEM_TYPES.inFlight, 'Another key-group move is in flight', detail);
  }
}
