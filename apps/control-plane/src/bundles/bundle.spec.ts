import { describe, expect, it } from 'vitest';
import { bundleObjectKey, stagingObjectKey } from './bundle';

describe('bundle object keys', () => {
  it('keeps the version (build metadata and all) in the final key but out of the staging key, a copy source', () => {
    expect(bundleObjectKey('t1', 'fraud', '1.0.0+build.7', 'ab12')).toBe('tenants/t1/bundles/fraud/1.0.0+build.7/ab12.js');
    const staging = stagingObjectKey('t1', 'fraud');
    expect(staging).toMatch(/^tenants\/t1\/bundles\/fraud\/uploads\/[0-9a-f-]{36}\.partial$/);
    // Nothing that S3 servers decode differently in a copy source: encodeURIComponent leaves every segment as is.
    expect(staging.split('/').map(encodeURIComponent).join('/')).toBe(staging);
  });
});
