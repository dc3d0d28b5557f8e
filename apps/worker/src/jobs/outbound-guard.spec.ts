import { describe, expect, it } from 'vitest';
import { outboundOf } from './outbound-guard';

// restrictOutbound itself changes this process's net module for good: it is exercised in a real job host
// (test/worker/hostile-bundle.test.ts, bench/isolation.ts), not here.
describe('outboundOf', () => {
  it('allows each Kafka broker, IPv6 ones too, and nothing else', () => {
    expect(outboundOf(['127.0.0.1:9094', 'kafka-2.internal:9093'])).toEqual([{ host: '127.0.0.1', port: 9094 }, { host: 'kafka-2.internal', port: 9093 }]);
    expect(outboundOf(['[::1]:9094'])).toEqual([{ host: '::1', port: 9094 }]);
  });
});
