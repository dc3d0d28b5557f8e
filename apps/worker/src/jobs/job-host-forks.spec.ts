import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WarmJobHosts } from './job-host-forks';

/** A child process stand-in: alive until kill() or die(). */
class FakeChild extends EventEmitter {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  connected = true;
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    this.die(signal);
    return true;
  }
  die(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.signalCode = signal;
    this.connected = false;
    this.emit('exit', null, signal);
  }
}

describe('WarmJobHosts', () => {
  afterEach(() => vi.useRealTimers());
  const pool = (spares: number, refillDelayMs = 1_000) => {
    const forked: FakeChild[] = [];
    const hosts = new WarmJobHosts({ spares, refillDelayMs, fork: () => ({ child: forked[forked.push(new FakeChild()) - 1] as unknown as ChildProcess, dir: '/nonexistent/weir-test-host' }) });
    return { hosts, forked };
  };

  it('forks its spares at once and hands them out in turn, then forks fresh ones', () => {
    const { hosts, forked } = pool(2);
    expect(forked).toHaveLength(2);
    expect(hosts.take().child).toBe(forked[0]);
    expect(hosts.take().child).toBe(forked[1]);
    expect(hosts.take().child).toBe(forked[2]);
    expect(hosts.ready).toBe(0);
  });

  it('refills only after the delay, back to its count, once however many were taken', () => {
    vi.useFakeTimers();
    const { hosts, forked } = pool(2, 1_000);
    hosts.take();
    hosts.take();
    vi.advanceTimersByTime(999);
    expect(forked).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(forked).toHaveLength(4);
    expect(hosts.ready).toBe(2);
  });

  it('skips a spare that died waiting and replaces it later; a taken child ending changes nothing', () => {
    vi.useFakeTimers();
    const { hosts, forked } = pool(2, 1_000);
    forked[0].die();
    expect(hosts.ready).toBe(1);
    const taken = hosts.take().child;
    expect(taken).toBe(forked[1]);
    vi.advanceTimersByTime(1_000);
    expect(hosts.ready).toBe(2);
    (taken as unknown as FakeChild).die();
    vi.advanceTimersByTime(5_000);
    expect(forked).toHaveLength(4);
  });

  it('with 0 spares forks nothing ahead; close() kills the spares and refills nothing', () => {
    vi.useFakeTimers();
    const none = pool(0);
    expect(none.forked).toHaveLength(0);
    expect(none.hosts.take().child).toBe(none.forked[0]);
    const { hosts, forked } = pool(1, 1_000);
    hosts.take();
    hosts.close();
    vi.advanceTimersByTime(5_000);
    expect(forked).toHaveLength(1);
    const { hosts: held, forked: heldForks } = pool(1);
    held.close();
    expect(heldForks[0].signalCode).toBe('SIGKILL');
  });
});
