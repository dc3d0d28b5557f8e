/** What a request is allowed to do once its API key is verified. Read keys hold ['read']; write keys both. */
export type Scope = 'read' | 'write';

export const SCOPES: readonly Scope[] = ['read', 'write'];

export interface Principal {
  readonly tenantId: string;
  readonly keyId: string;
  readonly scopes: readonly Scope[];
}

/** A write key may also read: scopes are cumulative. */
export function scopesOf(scope: Scope): readonly Scope[] {
  return scope === 'write' ? ['read', 'write'] : ['read'];
}
