import { describe, expect, it } from 'vitest';
import { DatabaseError, DatabaseUnavailableError, toDatabaseError } from './errors';

describe('toDatabaseError', () => {
  it('marks connection failures as unavailable (retryable)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    for (const err of [refused, shutdown, new Error('Connection terminated unexpectedly')]) {
      const wrapped = toDatabaseError(err, 'list workers');
      expect(wrapped).toBeInstanceOf(DatabaseUnavailableError);
      expect(wrapped.cause).toBe(err);
    }
  });

  it('keeps the SQLSTATE of other errors', () => {
    const unique = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    const wrapped = toDatabaseError(unique, 'insert');
    expect(wrapped).not.toBeInstanceOf(DatabaseUnavailableError);
    expect(wrapped).toBeInstanceOf(DatabaseError);
    expect(wrapped.code).toBe('23505');
    expect(wrapped.message).toBe('insert: duplicate key value violates unique constraint');
  });

  it('does not wrap twice', () => {
    const once = new DatabaseError('x');
    expect(toDatabaseError(once, 'y')).toBe(once);
  });
});
