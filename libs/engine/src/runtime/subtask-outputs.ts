import type { ChainTerminal } from './chain';
import type { ChainEnvLike } from './ports';

/**
 * Where a subtask's results leave it: its chain's terminals (sinks, exchange senders) and its dead letters. Emitting
 * hands on what the chain holds and waits until the terminals took it (backpressure time counts as such).
 */
export class SubtaskOutputs {
  constructor(
    private readonly env: ChainEnvLike,
    private readonly terminals: readonly ChainTerminal[],
  ) {}

  /** `positions`: those of the source batch just pushed, for keyed exchanges to pass on. */
  async emit(positions?: Readonly<Record<string, string>>): Promise<void> {
    const { env } = this;
    env.metrics.enter('backpressured', env.clock.now());
    await env.deadLetters.emit();
    await this.forEach((t) => t.emit(positions));
    env.metrics.enter('busy', env.clock.now());
  }

  forEach(fn: (t: ChainTerminal) => Promise<void>): Promise<void> {
    const terminals = this.terminals;
    if (terminals.length === 1) return fn(terminals[0]);
    if (terminals.length > 1) return Promise.all(terminals.map(fn)).then(() => undefined);
    return Promise.resolve();
  }
}
