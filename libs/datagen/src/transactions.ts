import { seededRandom } from './random';
import { zipfSampler } from './zipf';

/**
 * A payment as the fraud-detection job reads it (JSON on its transactions topic); `amount` in minor units keeps
 * sums exact. One type for the generator and the job (examples/fraud-detection re-exports it).
 */
export interface Transaction {
  readonly txId: string;
  /** Event time, epoch ms; the generator stamps its scheduled time, never the time it was actually sent. */
  readonly ts: number;
  readonly payer: string;
  readonly beneficiary: string;
  readonly card: string;
  readonly merchant: string;
  readonly amount: number;
}

export type TransactionKeyField = 'payer' | 'beneficiary' | 'card' | 'merchant';
export const TRANSACTION_KEY_FIELDS: readonly TransactionKeyField[] = ['payer', 'beneficiary', 'card', 'merchant'];

export interface KeySpace {
  /** Distinct keys (ranks 0..keys-1, named `<prefix>-<rank>`). */
  readonly keys: number;
  /** Zipf exponent; 0 is uniform. */
  readonly exponent: number;
}

/** A "viral" period: one key of one field carries `share` of all traffic from `atMs` for `forMs` (relative to start). */
export interface Burst {
  readonly field: TransactionKeyField;
  readonly key: string;
  /** Fraction of the period's transactions that carry the key, in [0, 1]. */
  readonly share: number;
  readonly atMs: number;
  readonly forMs: number;
}

export interface TransactionStreamOptions {
  readonly seed: number;
  /** Transactions per second; event i is scheduled at startTime + i·1000/rate. */
  readonly ratePerSec: number;
  /** Scheduled time of the first transaction, epoch ms. */
  readonly startTime: number;
  readonly payers?: KeySpace;
  readonly beneficiaries?: KeySpace;
  readonly cards?: KeySpace;
  readonly merchants?: KeySpace;
  /** Amounts are log-uniform integers in [min, max] minor units. */
  readonly amount?: { readonly min: number; readonly max: number };
  readonly burst?: Burst;
}

export class GeneratorOptionsError extends Error {
  override readonly name = 'GeneratorOptionsError';
}

const DEFAULT_SPACES: Readonly<Record<TransactionKeyField, KeySpace>> = {
  payer: { keys: 10_000, exponent: 1.1 },
  beneficiary: { keys: 10_000, exponent: 1.0 },
  card: { keys: 20_000, exponent: 1.1 },
  merchant: { keys: 1_000, exponent: 1.2 },
};
const PREFIX: Readonly<Record<TransactionKeyField, string>> = { payer: 'p', beneficiary: 'b', card: 'c', merchant: 'm' };

/**
 * A deterministic, random-access stream of transactions: `at(i)` depends only on the options and i (each event draws
 * from its own PRNG seeded by (seed, i)), so the same seed gives the same stream however it is sliced or paced.
 */
export class TransactionStream {
  private readonly samplers: Readonly<Record<TransactionKeyField, () => number>>;
  private random: () => number = () => 0;
  private readonly minAmount: number;
  private readonly amountRatio: number;

  constructor(readonly options: TransactionStreamOptions) {
    checkOptions(options);
    const draw = () => this.random();
    const given: Partial<Record<TransactionKeyField, KeySpace>> = {
      payer: options.payers,
      beneficiary: options.beneficiaries,
      card: options.cards,
      merchant: options.merchants,
    };
    const space = (field: TransactionKeyField) => given[field] ?? DEFAULT_SPACES[field];
    this.samplers = {
      payer: zipfSampler(space('payer').keys, space('payer').exponent, draw),
      beneficiary: zipfSampler(space('beneficiary').keys, space('beneficiary').exponent, draw),
      card: zipfSampler(space('card').keys, space('card').exponent, draw),
      merchant: zipfSampler(space('merchant').keys, space('merchant').exponent, draw),
    };
    this.minAmount = options.amount?.min ?? 100;
    this.amountRatio = (options.amount?.max ?? 500_000) / this.minAmount;
  }

  /** Scheduled time of event `index`. */
  scheduledTime(index: number): number {
    return this.options.startTime + Math.floor((index * 1_000) / this.options.ratePerSec);
  }

  /** How many events are scheduled before `startTime + elapsedMs`. */
  countBefore(elapsedMs: number): number {
    return Math.max(0, Math.ceil((elapsedMs * this.options.ratePerSec) / 1_000));
  }

  at(index: number): Transaction {
    this.random = seededRandom(mix(this.options.seed, index));
    const ts = this.scheduledTime(index);
    const burst = this.options.burst;
    const bursting = burst !== undefined && ts - this.options.startTime >= burst.atMs && ts - this.options.startTime < burst.atMs + burst.forMs;
    const pick = (field: TransactionKeyField): string => {
      if (!bursting || burst.field !== field) return this.sample(field);
      if (this.random() < burst.share) return burst.key;
      // Outside the share, the key is excluded so that it carries exactly `share` of the period's traffic.
      for (let attempt = 0; attempt < 64; attempt++) {
        const key = this.sample(field);
        if (key !== burst.key) return key;
      }
      return `${PREFIX[field]}-other`;
    };
    return {
      txId: `tx-${this.options.seed}-${index}`,
      ts,
      payer: pick('payer'),
      beneficiary: pick('beneficiary'),
      card: pick('card'),
      merchant: pick('merchant'),
      amount: Math.round(this.minAmount * Math.pow(this.amountRatio, this.random())),
    };
  }

  /** Events [from, to). */
  range(from: number, to: number): Transaction[] {
    const out: Transaction[] = [];
    for (let i = from; i < to; i++) out.push(this.at(i));
    return out;
  }

  private sample(field: TransactionKeyField): string {
    return `${PREFIX[field]}-${this.samplers[field]()}`;
  }
}

/** splitmix-style mixing of (seed, index) into one 32-bit PRNG seed, so neighbouring indexes are unrelated. */
function mix(seed: number, index: number): number {
  let h = Math.imul((seed ^ 0x9e3779b9) >>> 0, 0x85ebca6b) ^ Math.imul(index >>> 0, 0xc2b2ae35) ^ Math.imul(Math.floor(index / 4294967296), 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

function checkOptions(o: TransactionStreamOptions): void {
  if (!Number.isInteger(o.seed)) throw new GeneratorOptionsError(`seed must be an integer, got ${o.seed}`);
  if (!(o.ratePerSec > 0) || !Number.isFinite(o.ratePerSec)) throw new GeneratorOptionsError(`rate must be a positive number of transactions per second, got ${o.ratePerSec}`);
  if (!Number.isFinite(o.startTime)) throw new GeneratorOptionsError(`startTime must be epoch ms, got ${o.startTime}`);
  if (o.amount && !(Number.isInteger(o.amount.min) && o.amount.min >= 1 && Number.isInteger(o.amount.max) && o.amount.max >= o.amount.min)) {
    throw new GeneratorOptionsError('amount must be integers 1 ≤ min ≤ max');
  }
  const b = o.burst;
  if (b) {
    if (!TRANSACTION_KEY_FIELDS.includes(b.field)) throw new GeneratorOptionsError(`burst field must be one of ${TRANSACTION_KEY_FIELDS.join(', ')}, got ${b.field}`);
    if (!b.key) throw new GeneratorOptionsError('burst key must not be empty');
    if (!(b.share >= 0 && b.share <= 1)) throw new GeneratorOptionsError(`burst share must be in [0, 1], got ${b.share}`);
    if (!(b.atMs >= 0) || !(b.forMs > 0)) throw new GeneratorOptionsError('burst needs atMs ≥ 0 and forMs > 0');
  }
}
