import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Verifies the platform admin token. Both sides are hashed first so the comparison is constant-time whatever the
 * presented length. Without WEIR_ADMIN_TOKEN, administration over HTTP is disabled.
 */
export class AdminTokenVerifier {
  private readonly expected: Buffer | null;

  constructor(adminToken: string | undefined) {
    this.expected = adminToken ? digest(adminToken) : null;
  }

  get enabled(): boolean {
    return this.expected !== null;
  }

  matches(presented: string): boolean {
    return this.expected !== null && timingSafeEqual(digest(presented), this.expected);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
