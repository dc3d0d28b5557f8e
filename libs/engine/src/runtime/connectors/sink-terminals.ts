import { type ChainEnv, SinkTerminal } from '../chain';
import { EpochSinkTerminal } from './epoch-sink-terminal';
import { ExactlyOnceKafkaSinkWriter } from './exactly-once-sink';
import { KafkaSinkWriter, type SinkWriter } from './sink-writers';

/** A Kafka sink terminal whose writes are acknowledged behind its back: a barrier waits for them (at-least-once). */
export class KafkaSinkTerminal extends SinkTerminal {
  constructor(
    private readonly kafka: KafkaSinkWriter,
    env: ChainEnv,
  ) {
    super(kafka, env);
  }

  override onBarrier(): Promise<void> {
    return this.kafka.drain();
  }
}

/** The terminal for a sink writer: exactly-once sinks seal epochs at barriers, write-behind sinks drain. */
export function sinkTerminal(writer: SinkWriter, env: ChainEnv): SinkTerminal {
  if (writer instanceof ExactlyOnceKafkaSinkWriter) return new EpochSinkTerminal(writer, env);
  if (writer instanceof KafkaSinkWriter) return new KafkaSinkTerminal(writer, env);
  return new SinkTerminal(writer, env);
}
