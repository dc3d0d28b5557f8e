import { type ChainEnv, SinkTerminal } from '../chain';
import type { ExactlyOnceKafkaSinkWriter } from './exactly-once-sink';

/** A sink terminal whose barrier seals the exactly-once writer's epoch (everything before it was handed to the writer already). */
export class EpochSinkTerminal extends SinkTerminal {
  constructor(
    private readonly epochs: ExactlyOnceKafkaSinkWriter,
    env: ChainEnv,
  ) {
    super(epochs, env);
  }

  override onBarrier(checkpointId?: number): Promise<void> {
    if (checkpointId !== undefined) this.epochs.seal(checkpointId);
    return Promise.resolve();
  }
}
