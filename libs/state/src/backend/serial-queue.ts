/**
 * Runs async tasks one at a time, in call order. The backend's store-touching operations go through one queue so
 * that, say, a prefetch cannot load a key group's old values while a restore replaces them.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // A failed task fails its caller, not the tasks queued behind it.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
