import { describe, expect, it } from 'vitest';
import { checkpointingOf, CheckpointingSettingsError, checkpointingViolations, DEFAULT_CHECKPOINTING } from './checkpointing-settings';

describe('checkpointingOf', () => {
  it('defaults to a 10 s interval, 3 retained, at-least-once, a 10 min timeout', () => {
    expect(checkpointingOf({})).toEqual(DEFAULT_CHECKPOINTING);
    expect(DEFAULT_CHECKPOINTING).toEqual({ intervalMs: 10_000, retain: 3, delivery: 'at-least-once', timeoutMs: 600_000 });
  });

  it('reads the deployment properties', () => {
    expect(
      checkpointingOf({
        properties: { 'checkpoint.interval-ms': '500', 'checkpoint.retain': '5', 'sink.delivery': 'exactly-once', 'checkpoint.timeout-ms': '30000' },
      }),
    ).toEqual({ intervalMs: 500, retain: 5, delivery: 'exactly-once', timeoutMs: 30_000 });
  });

  it('refuses values it cannot use, naming the property', () => {
    expect(() => checkpointingOf({ properties: { 'checkpoint.interval-ms': '10ms' } })).toThrow(CheckpointingSettingsError);
    expect(() => checkpointingOf({ properties: { 'checkpoint.retain': '0' } })).toThrow(/checkpoint.retain/);
    expect(() => checkpointingOf({ properties: { 'sink.delivery': 'exactly-twice' } })).toThrow(/sink.delivery/);
    expect(() => checkpointingOf({ properties: { 'checkpoint.timeout-ms': '10' } })).toThrow(/checkpoint.timeout-ms/);
    expect(checkpointingViolations({ 'checkpoint.retain': 'x' })).toEqual([
      { in: 'body', name: 'config.properties.checkpoint.retain', reason: expect.stringContaining('integer') },
    ]);
    expect(checkpointingViolations(undefined)).toEqual([]);
  });
});
