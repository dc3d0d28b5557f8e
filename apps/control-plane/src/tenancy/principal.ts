/**
 * What a request is allowed to do once its API key is verified. read: every GET; rules: read, and change rules
 * (apply, roll back, shadow) and nothing else; write: everything a tenant may do.
 */
export type Scope = 'read' | 'write' | 'rules';

export const SCOPES: readonly Scope[] = ['read', 'write', 'rules'];

export interface Principal {
  readonly tenantId: string;
  readonly keyId: string;
  readonly scopes: readonly Scope[];
}

/** What a key of `scope` holds: every key reads, a write key changes rules too. */
export function scopesOf(scope: Scope): readonly Scope[] {
  return scope === 'write' ? ['read', 'write', 'rules'] : scope === 'rules' ? ['read', 'rules'] : ['read'];
}
