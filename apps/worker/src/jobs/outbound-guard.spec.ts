import { describe, expect, it } from 'vitest';
import { outboundOf } from './outbound-guard';

// restrictOutbound itself changes this process's net module for good: it is exercised in a real job host
// (test/worker/hostile-bundle.test.ts, bench/isolation.ts), not here.
describe('outboundOf', () => {
  it('allows each Kafka broker and the S3 endpoint, with its default port', () => {
    expect(outboundOf({ WEIR_KAFKA_BROKERS: ['127.0.0.1:9092', 'kafka-2.internal:9093'], WEIR_S3_ENDPOINT: 'https://s3.internal' })).toEqual({
      endpoints: [{ host: '127.0.0.1', port: 9092 }, { host: 'kafka-2.internal', port: 9093 }, { host: 's3.internal', port: 443 }],
      awsS3: false,
    });
    expect(outboundOf({ WEIR_KAFKA_BROKERS: ['[::1]:9092'], WEIR_S3_ENDPOINT: 'http://[::1]:4568' }).endpoints).toEqual([{ host: '::1', port: 9092 }, { host: '::1', port: 4568 }]);
  });

  it('with no S3 endpoint (AWS itself) allows AWS on 443', () => {
    expect(outboundOf({ WEIR_KAFKA_BROKERS: ['b:9092'], WEIR_S3_ENDPOINT: null })).toEqual({ endpoints: [{ host: 'b', port: 9092 }], awsS3: true });
  });
});
