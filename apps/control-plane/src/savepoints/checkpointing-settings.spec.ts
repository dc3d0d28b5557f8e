import { describe, expect, it } from 'vitest';
import { checkpointingOf, CheckpointingSettingsError, checkpointingViolations, DEFAULT_CHECKPOINTING } from './checkpointing-settings';

describe('checkpointingOf', () => {
  it('defaults to a 10 s interval, 3 retained, at-least-once', () => {
    expect(checkpointingOf({})).toEqual(DEFAULT_CHECKPOINTING);
    expect(DEFAULT_CHECKPOINTING).toEqual({ intervalMs: 10_000, retain: 3, delivery: 'at-least-once' });
  });

  it('reads the deployment properties', () => {
    expect(checkpointingOf({ properties: { 'checkpoint.interval-ms': '500', 'checkpoint.retain': '5', 'sink.delivery': 'exactly-once' } })).toEqual({
      intervalMs: 500,
      retain: 5,
      delivery: 'exactly-once',
    });
  });

  it('refuses values it cannot use, naming the property', () => {
    expect(() => checkpointingOf({ properties: { 'checkpoint.interval-ms': '10ms' } })).toThrow(CheckpointingSettingsError);
    expect(() => checkpointingOf({ properties: { 'checkpoint.retain': '0' } })).toThrow(/checkpoint.retain/);
    expect(() => checkpointingOf({ properties: { 'sink.delivery': 'exactly-twice' } })).toThrow(/sink.delivery/);
    expect(checkpointingViolations({ 'checkpoint.retain': 'x' })).toEqual([
      { in: 'body', name: 'config.properties.checkpoint.retain', reason: expect.stringContaining('integer') },
    ]);
    expect(checkpointingViolations(undefined)).toEqual([]);
  });
});
