import { assertParallelism, defaultOwnerOf } from './key-groups';

export class RoutingError extends Error {
  override readonly name = 'RoutingError';
}

/**
 * Which subtask owns each key group of one keyed operator. Immutable and versioned: a change (a key-group move, a
 * rescale) produces a new table with version + 1, so every message can say which table routed it.
 */
export class RoutingTable {
  private constructor(
    readonly version: number,
    readonly parallelism: number,
    private readonly owners: Int32Array,
  ) {}

  static initial(parallelism: number, maxParallelism: number): RoutingTable {
    assertParallelism(parallelism, maxParallelism);
    const owners = new Int32Array(maxParallelism);
    for (let kg = 0; kg < maxParallelism; kg++) owners[kg] = defaultOwnerOf(kg, parallelism, maxParallelism);
    return new RoutingTable(1, parallelism, owners);
  }

  static fromOwners(version: number, parallelism: number, owners: readonly number[]): RoutingTable {
    const table = new RoutingTable(version, parallelism, Int32Array.from(owners));
    for (let kg = 0; kg < owners.length; kg++) table.checkSubtask(owners[kg]);
    return table;
  }

  get maxParallelism(): number {
    return this.owners.length;
  }

  ownerOf(keyGroup: number): number {
    return this.owners[keyGroup];
  }

  keyGroupsOf(subtask: number): number[] {
    const out: number[] = [];
    for (let kg = 0; kg < this.owners.length; kg++) if (this.owners[kg] === subtask) out.push(kg);
    return out;
  }

  /** A new table (version + 1) where the given key groups belong to `toSubtask`. */
  withMoves(moves: ReadonlyArray<{ keyGroup: number; toSubtask: number }>): RoutingTable {
    const owners = Int32Array.from(this.owners);
    for (const { keyGroup, toSubtask } of moves) {
      if (!Number.isInteger(keyGroup) || keyGroup < 0 || keyGroup >= owners.length) {
        throw new RoutingError(`key group ${keyGroup} is outside [0, ${owners.length})`);
      }
      this.checkSubtask(toSubtask);
      owners[keyGroup] = toSubtask;
    }
    return new RoutingTable(this.version + 1, this.parallelism, owners);
  }

  /**
   * A new table (version + 1) with the same owners over `parallelism` subtasks: a live rescale widens a table before
   * key groups move to the new subtasks, and narrows it once the retiring ones own nothing.
   */
  withParallelism(parallelism: number): RoutingTable {
    const table = new RoutingTable(this.version + 1, parallelism, Int32Array.from(this.owners));
    assertParallelism(parallelism, this.owners.length);
    for (let kg = 0; kg < this.owners.length; kg++) table.checkSubtask(this.owners[kg]);
    return table;
  }

  toJSON(): { version: number; parallelism: number; owners: number[] } {
    return { version: this.version, parallelism: this.parallelism, owners: Array.from(this.owners) };
  }

  private checkSubtask(subtask: number): void {
    if (!Number.isInteger(subtask) || subtask < 0 || subtask >= this.parallelism) {
      throw new RoutingError(`subtask ${subtask} is outside [0, ${this.parallelism})`);
    }
  }
}
