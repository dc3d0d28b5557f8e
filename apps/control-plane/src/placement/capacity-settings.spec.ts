import { describe, expect, it } from 'vitest';
import { capacityViolations, CapacitySettingsError, subtaskCapacityOf } from './capacity-settings';

describe('subtask.max-records-per-second', () => {
  it('is absent by default (no cap) and reads a positive number', () => {
    expect(subtaskCapacityOf({})).toBeUndefined();
    expect(subtaskCapacityOf({ properties: { 'subtask.max-records-per-second': '5000' } })).toBe(5000);
    expect(subtaskCapacityOf({ properties: { 'subtask.max-records-per-second': '2.5' } })).toBe(2.5);
    expect(subtaskCapacityOf({ properties: { 'subtask.max-records-per-second': '1e4' } })).toBe(10_000);
  });

  it('refuses what is not a positive number, naming the property for a 400', () => {
    for (const bad of ['0', '-5', 'abc', '', ' 5', '0x10', 'Infinity', '1e999', '5 rps']) {
      expect(() => subtaskCapacityOf({ properties: { 'subtask.max-records-per-second': bad } }), bad).toThrow(CapacitySettingsError);
    }
    expect(capacityViolations({ 'subtask.max-records-per-second': '0' })).toEqual([
      {
        in: 'body',
        name: 'config.properties.subtask.max-records-per-second',
        reason: 'properties.subtask.max-records-per-second must be a positive number of records per second (e.g. 5000 or 2.5), not "0"',
      },
    ]);
    expect(capacityViolations({ 'checkpoint.interval-ms': 'x' })).toEqual([]);
    expect(capacityViolations(undefined)).toEqual([]);
  });
});
