/**
 * The bundle inspector's process (forked by inspectBundle): takes one request on IPC, loads the bundle in an
 * isolate, answers, exits. A process of its own because isolated-vm needs Node started with --no-node-snapshot (which
 * the control plane and the test runner are not), and so that a V8 failure or a heap blown by the host side of an
 * isolate ends this process, not the control plane. It runs under Node's permission model with no environment.
 */
import { describeInIsolate, type IsolateAnswer, type IsolateLimits } from './describe-in-isolate';

export interface InspectRequest {
  readonly sdkSource: string;
  readonly bundleSource: string;
  readonly limits: IsolateLimits;
  /** A deployment's config to build a parameterized job with; null: sample values and defaults. */
  readonly config: unknown;
}

process.once('message', (request: InspectRequest) => {
  let answer: IsolateAnswer | { readonly failed: string };
  try {
    answer = describeInIsolate(request.sdkSource, request.bundleSource, request.limits, request.config);
  } catch (err) {
    answer = { failed: (err as Error).message };
  }
  process.send!(answer, () => process.exit(0));
});
