import type { Transaction } from '@weir/datagen';
import type { EventFields } from '@weir/rules';

/** The transaction type is @weir/datagen's (the generator writes what the job reads): one definition for both. */
export type { Transaction };

/** The fields rules may group by or aggregate: what rules are validated against. */
export const TRANSACTION_FIELDS: EventFields = {
  txId: 'string',
  ts: 'number',
  payer: 'string',
  beneficiary: 'string',
  card: 'string',
  merchant: 'string',
  amount: 'number',
};

export class TransactionFormatError extends Error {
  override readonly name = 'TransactionFormatError';
}

/** Checks a decoded transaction; a malformed one throws, which sends it to the dead-letter queue with the reason. */
export function checkTransaction(value: unknown): Transaction {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TransactionFormatError('a transaction must be a JSON object');
  const tx = value as Record<string, unknown>;
  for (const [field, type] of Object.entries(TRANSACTION_FIELDS)) {
    const v = tx[field];
    const ok = type === 'number' ? typeof v === 'number' && Number.isFinite(v) : typeof v === 'string' && v.length > 0;
    if (!ok) throw new TransactionFormatError(`transaction field "${field}" must be ${type === 'number' ? 'a finite number' : 'a non-empty string'}, got ${JSON.stringify(v)}`);
  }
  return value as Transaction;
}
