import { ProblemException } from '../problems/problem.exception';
import { AUTH_PROBLEM_TYPES } from '../tenancy/auth.problems';

export const BUNDLE_PROBLEM_TYPES = {
  versionExists: 'urn:weir:problem:bundle-version-exists',
  inUse: 'urn:weir:problem:bundle-in-use',
} as const;

/** Versions are immutable: a new build needs a new version. */
export class BundleVersionExistsProblem extends ProblemException {
  override readonly name = 'BundleVersionExistsProblem';
  constructor(name: string, version: string) {
    super(409, BUNDLE_PROBLEM_TYPES.versionExists, 'Bundle version exists', `Bundle ${name} ${version} already exists; versions are immutable, upload a new version`);
  }
}

export class BundleInUseProblem extends ProblemException {
  override readonly name = 'BundleInUseProblem';
  constructor(id: string) {
    super(409, BUNDLE_PROBLEM_TYPES.inUse, 'Bundle in use', `Bundle ${JSON.stringify(id)} is used by a deployment or one of its runs; it cannot be deleted`);
  }
}

/** The upload passed the tenant's maxBundleBytes: cut off, nothing kept. */
export class BundleTooLargeProblem extends ProblemException {
  override readonly name = 'BundleTooLargeProblem';
  constructor(limit: number) {
    super(413, AUTH_PROBLEM_TYPES.quotaExceeded, 'Bundle too large', `Quota maxBundleBytes exceeded: the bundle is larger than the tenant's limit of ${limit} bytes`);
  }
}
