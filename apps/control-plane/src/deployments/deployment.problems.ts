import { ProblemException } from '../problems/problem.exception';

export const DEPLOYMENT_PROBLEM_TYPES = {
  conflict: 'urn:weir:problem:conflict',
} as const;

/** The request is valid but clashes with the deployment's state (cancelled, name taken). */
export class DeploymentConflictProblem extends ProblemException {
  override readonly name = 'DeploymentConflictProblem';
  constructor(detail: string) {
    super(409, DEPLOYMENT_PROBLEM_TYPES.conflict, 'Conflict', detail);
  }
}
