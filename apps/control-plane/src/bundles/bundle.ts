import { randomBytes, randomUUID } from 'node:crypto';
import type { BundleManifest } from './manifest';

export interface Bundle {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly version: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  /** Where the code is on S3: tenants/<tenantId>/bundles/<name>/<version>/<sha256>.js */
  readonly s3Key: string;
  readonly manifest: BundleManifest;
  readonly createdAt: Date;
}

export function newBundleId(): string {
  return `b${randomBytes(12).toString('hex')}`;
}

/** Every bundle object sits under its tenant's prefix; the name carries the content hash. */
export function bundleObjectKey(tenantId: string, name: string, version: string, sha256: string): string {
  return `tenants/${tenantId}/bundles/${name}/${version}/${sha256}.js`;
}

/**
 * Where an upload lands before its hash is known; removed once the bundle is stored, or on any failure. Not under
 * the version: a version may hold `+` (build metadata), and this key is a copy source, which the S3 servers do not
 * decode alike (see @weir/blob's copy); a slug and a UUID need no encoding.
 */
export function stagingObjectKey(tenantId: string, name: string): string {
  return `tenants/${tenantId}/bundles/${name}/uploads/${randomUUID()}.partial`;
}
