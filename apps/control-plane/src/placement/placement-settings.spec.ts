import { describe, expect, it } from 'vitest';
import { DEFAULT_PLACEMENT_TIMEOUT_MS, placementTimeoutOf, placementViolations, PlacementSettingsError } from './placement-settings';

describe('placement.timeout-ms', () => {
  it('defaults to five minutes and reads an integer number of milliseconds', () => {
    expect(DEFAULT_PLACEMENT_TIMEOUT_MS).toBe(300_000);
    expect(placementTimeoutOf({})).toBe(300_000);
    expect(placementTimeoutOf({ properties: { 'placement.timeout-ms': '60000' } })).toBe(60_000);
  });

  it('refuses what is not an integer in [1 s, 7 days], naming the property for a 400', () => {
    for (const bad of ['abc', '999', '1.5', '604800001', '']) {
      expect(() => placementTimeoutOf({ properties: { 'placement.timeout-ms': bad } })).toThrow(PlacementSettingsError);
    }
    expect(placementViolations({ 'placement.timeout-ms': '10' })).toEqual([
      { in: 'body', name: 'config.properties.placement.timeout-ms', reason: 'properties.placement.timeout-ms must be an integer in [1000, 604800000], not "10"' },
    ]);
    expect(placementViolations({ 'checkpoint.interval-ms': '10' })).toEqual([]);
    expect(placementViolations(undefined)).toEqual([]);
  });
});
