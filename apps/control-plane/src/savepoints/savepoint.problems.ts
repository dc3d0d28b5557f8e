import { ProblemException } from '../problems/problem.exception';

export const SAVEPOINT_PROBLEM_TYPES = {
  notRunning: 'urn:weir:problem:deployment-not-running',
  incompatible: 'urn:weir:problem:savepoint-incompatible',
} as const;

/** A savepoint needs a running job to take it. */
export class DeploymentNotRunningProblem extends ProblemException {
  override readonly name = 'DeploymentNotRunningProblem';
  constructor(detail: string) {
    super(409, SAVEPOINT_PROBLEM_TYPES.notRunning, 'Deployment not running', detail);
  }
}

/** The savepoint's state does not fit the bundle: names each operator and why. */
export class SavepointIncompatibleProblem extends ProblemException {
  override readonly name = 'SavepointIncompatibleProblem';
  constructor(detail: string) {
    super(409, SAVEPOINT_PROBLEM_TYPES.incompatible, 'Savepoint incompatible with the bundle', detail);
  }
}
