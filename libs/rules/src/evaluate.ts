import type { AggregateFunctionName, Comparison, Rule } from './rule';

/** Whether `aggregate <comparison> limit` holds. Plain number comparison: `=` on fractional sums is exact equality. */
export function compare(comparison: Comparison, aggregate: number, limit: number): boolean {
  switch (comparison) {
    case '>':
      return aggregate > limit;
    case '>=':
      return aggregate >= limit;
    case '<':
      return aggregate < limit;
    case '<=':
      return aggregate <= limit;
    case '=':
      return aggregate === limit;
    case '!=':
      return aggregate !== limit;
  }
}

/**
 * Running aggregate of one window: add every value, then read the result. COUNT counts additions; the others use
 * the values (an empty window has no SUM/AVG/MIN/MAX: `result()` is undefined).
 */
export class WindowAggregate {
  private count = 0;
  private sum = 0;
  private min = Infinity;
  private max = -Infinity;

  constructor(private readonly fn: AggregateFunctionName) {}

  add(value: number): void {
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /**
   * Adds a run of values already aggregated (e.g. a bucket's totals). A SUM is then added run by run: exact for
   * integer values, and may differ in the last bits from a value-by-value sum of fractional ones.
   */
  addTotals(count: number, sum: number, min: number, max: number): void {
    if (count === 0) return;
    this.count += count;
    this.sum += sum;
    if (min < this.min) this.min = min;
    if (max > this.max) this.max = max;
  }

  result(): number | undefined {
    if (this.fn === 'COUNT') return this.count;
    if (this.count === 0) return undefined;
    switch (this.fn) {
      case 'SUM':
        return this.sum;
      case 'AVG':
        return this.sum / this.count;
      case 'MIN':
        return this.min;
      case 'MAX':
        return this.max;
    }
  }
}

/**
 * The key an event has under a rule: its grouping-key values in the rule's order, JSON-encoded so that values
 * containing separators cannot collide. Undefined when the event lacks one of the fields.
 */
export function groupingKeyOf(rule: Pick<Rule, 'groupingKeys'>, event: Readonly<Record<string, unknown>>): string | undefined {
  const values: unknown[] = [];
  for (const field of rule.groupingKeys) {
    const value = event[field];
    if (value === undefined || value === null) return undefined;
    values.push(value);
  }
  return JSON.stringify(values);
}

/** The value an event contributes to a rule's aggregate: 1 for COUNT, else the aggregate field if it is a finite number. */
export function aggregateInput(rule: Pick<Rule, 'function' | 'aggregateField'>, event: Readonly<Record<string, unknown>>): number | undefined {
  if (rule.function === 'COUNT') return 1;
  const value = rule.aggregateField === undefined ? undefined : event[rule.aggregateField];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
