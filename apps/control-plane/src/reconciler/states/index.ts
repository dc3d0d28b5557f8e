import type { DeploymentStatus } from '../../deployments/deployment';
import type { StateHandler } from '../state-machine';
import { cancelled } from './cancelled';
import { created } from './created';
import { failed } from './failed';
import { finished } from './finished';
import { recovering } from './recovering';
import { rescaling } from './rescaling';
import { running } from './running';
import { starting } from './starting';
import { stopping } from './stopping';
import { suspended } from './suspended';
import { upgrading } from './upgrading';

/** The state machine: one handler per observed status. */
export const STATE_HANDLERS: Readonly<Record<DeploymentStatus, StateHandler>> = {
  CREATED: created,
  STARTING: starting,
  RUNNING: running,
  RESCALING: rescaling,
  RECOVERING: recovering,
  UPGRADING: upgrading,
  STOPPING: stopping,
  SUSPENDED: suspended,
  FAILED: failed,
  FINISHED: finished,
  CANCELLED: cancelled,
};
