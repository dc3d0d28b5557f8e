import type { InputQueue } from './queue';

/** Runs `fn` inside a subtask's loop, between the messages before and after it; resolves with its result. */
export function inBand<T>(queue: InputQueue, fn: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    queue.offer({
      kind: 'control',
      run: async () => {
        try {
          resolve(await fn());
        } catch (err) {
          reject(err);
        }
      },
    });
  });
}
