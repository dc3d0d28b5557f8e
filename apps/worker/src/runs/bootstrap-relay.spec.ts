import { afterEach, describe, expect, it, vi } from 'vitest';
import { BootstrapRelay } from './bootstrap-relay';
import type { RunControlChannel, RunControlMessage } from './run-control';

/** A channel that records what is published, failing the first `failures` publishes. */
function recordingChannel(failures = 0): RunControlChannel & { published: RunControlMessage[] } {
  let left = failures;
  const published: RunControlMessage[] = [];
  return {
    published,
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
    publish: (message) => {
      if (left-- > 0) return Promise.reject(new Error('broker unavailable'));
      published.push(message);
      return Promise.resolve();
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('BootstrapRelay', () => {
  it('holds announcements until the leader says every process of the run reads the channel', () => {
    const channel = recordingChannel();
    const relay = new BootstrapRelay(3, channel);
    relay.announce('rules', 0);
    relay.onMessage({ type: 'hello', ready: [0, 2] });
    expect(channel.published).toEqual([]);
    relay.onMessage({ type: 'hello', ready: [0, 2, 1] });
    expect(channel.published).toEqual([{ type: 'broadcast-caught-up', stageId: 'rules', subtask: 0 }]);
    // Once everyone reads, an announcement goes out at once, and a later hello sends nothing twice.
    relay.announce('rules', 1);
    relay.onMessage({ type: 'hello', ready: [0, 1, 2] });
    expect(channel.published.map((m) => (m.type === 'broadcast-caught-up' ? m.subtask : -1))).toEqual([0, 1]);
  });

  it("hands every process's announcements, its own too, to the engine", () => {
    const relay = new BootstrapRelay(2, recordingChannel());
    const heard: string[] = [];
    relay.listen((stageId, subtask) => heard.push(`${stageId}/${subtask}`));
    relay.onMessage({ type: 'broadcast-caught-up', stageId: 'rules', subtask: 1 });
    relay.onMessage({ type: 'broadcast-caught-up', stageId: 'rules', subtask: 0 });
    expect(heard).toEqual(['rules/1', 'rules/0']);
  });

  it('publishes a failed announcement again (the data sources wait for it)', async () => {
    vi.useFakeTimers();
    const channel = recordingChannel(1);
    const relay = new BootstrapRelay(1, channel);
    relay.onMessage({ type: 'hello', ready: [0] });
    relay.announce('rules', 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(channel.published).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(channel.published).toEqual([{ type: 'broadcast-caught-up', stageId: 'rules', subtask: 0 }]);
    relay.close();
  });
});
