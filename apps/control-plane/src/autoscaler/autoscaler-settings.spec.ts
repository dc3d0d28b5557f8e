import { describe, expect, it } from 'vitest';
import { autoscalerPolicyOf, autoscalerViolations, defaultAutoscalerPolicy } from './autoscaler-settings';

describe('the autoscaler policy from deployment properties', () => {
  it('takes the defaults, the bundle’s maxParallelism as the upper bound', () => {
    expect(autoscalerPolicyOf({}, 32)).toEqual(defaultAutoscalerPolicy(32));
    expect(defaultAutoscalerPolicy(32)).toMatchObject({ targetUtilization: 0.7, scaleUpWindowMs: 60_000, scaleDownWindowMs: 600_000, cooldownMs: 300_000, minParallelism: 1, maxParallelism: 32 });
  });

  it('reads every autoscaler.* property', () => {
    const properties = {
      'autoscaler.interval-ms': '2000',
      'autoscaler.target-utilization': '0.6',
      'autoscaler.scale-up-window-ms': '0',
      'autoscaler.scale-down-window-ms': '5000',
      'autoscaler.cooldown-ms': '3000',
      'autoscaler.catch-up-ms': '60000',
      'autoscaler.min-parallelism': '2',
      'autoscaler.max-parallelism': '8',
      'autoscaler.slo-fraction': '0.9',
    };
    expect(autoscalerPolicyOf({ properties }, 32)).toEqual({
      intervalMs: 2_000, targetUtilization: 0.6, scaleUpWindowMs: 0, scaleDownWindowMs: 5_000, cooldownMs: 3_000, catchUpMs: 60_000, minParallelism: 2, maxParallelism: 8, sloFraction: 0.9,
    });
  });

  it('names the property and its range in a 400 problem', () => {
    expect(autoscalerViolations({ 'autoscaler.target-utilization': '1.5' }, 32)).toEqual([
      { in: 'body', name: 'config.properties.autoscaler.target-utilization', reason: 'properties.autoscaler.target-utilization must be a number in [0.1, 0.95], not "1.5"' },
    ]);
    expect(autoscalerViolations({ 'autoscaler.max-parallelism': '64' }, 32)[0].reason).toBe(
      "properties.autoscaler.max-parallelism must be an integer in [1, 32] (the bundle's maxParallelism is 32), not \"64\"",
    );
    expect(autoscalerViolations({ 'autoscaler.cooldown-ms': 'soon' }, 32)[0].name).toBe('config.properties.autoscaler.cooldown-ms');
    expect(autoscalerViolations({ 'autoscaler.min-parallelism': '4', 'autoscaler.max-parallelism': '2' }, 32)[0].reason).toBe(
      'properties.autoscaler.min-parallelism (4) must not exceed the maximum (2)',
    );
    expect(autoscalerViolations(undefined, 32)).toEqual([]);
  });
});
