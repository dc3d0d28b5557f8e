import { readFile } from 'node:fs/promises';
import { fraudRuleLimits } from '../../../../examples/fraud-detection';
import { eventFieldsFromJsonSchema, formatProblem, type RuleLimits, validateRule, validateRules } from '@weir/rules';
import { type Command, EXIT, optionalNumber, UsageError } from '../command';

/**
 * `weir rules validate FILE`: checks a rule, an array of rules or `{ "rules": [...] }` against the rule schema and a
 * job's limits — by default the fraud-detection job's transaction fields and window limit.
 */
export const rulesValidateCommand: Command = {
  path: ['rules', 'validate'],
  summary: 'validate rules (JSON: a rule, an array, or { "rules": [...] }); exit 1 when any is invalid',
  usage: 'FILE [--max-window-ms N] [--event-schema FILE]',
  options: {
    'max-window-ms': { type: 'string' },
    'event-schema': { type: 'string' },
  },
  async run({ values, positionals }, io) {
    if (positionals.length !== 1) throw new UsageError('give exactly one rules file');
    const file = positionals[0];
    const limits = await limitsFrom(values);
    const doc = await readJson(file);
    const result = Array.isArray(doc)
      ? validateRules(doc, limits)
      : isRulesList(doc)
        ? validateRules(doc.rules, limits)
        : toList(validateRule(doc, limits));
    if (result.ok) {
      io.out(`${file}: ${result.rules.length} rule${result.rules.length === 1 ? '' : 's'} valid`);
      return EXIT.ok;
    }
    for (const problem of result.problems) io.out(formatProblem(problem));
    io.err(`${file}: ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'}`);
    return EXIT.failed;
  },
};

async function limitsFrom(values: Record<string, unknown>): Promise<RuleLimits> {
  const base = fraudRuleLimits(optionalNumber(values, 'max-window-ms', (n) => Number.isInteger(n) && n > 0, 'a positive integer'));
  const schemaFile = values['event-schema'];
  if (typeof schemaFile !== 'string') return base;
  try {
    return { ...base, fields: eventFieldsFromJsonSchema(await readJson(schemaFile)) };
  } catch (err) {
    throw new UsageError(`--event-schema ${schemaFile}: ${(err as Error).message}`);
  }
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
  }
}

function isRulesList(doc: unknown): doc is { rules: unknown } {
  return doc !== null && typeof doc === 'object' && 'rules' in doc && Object.keys(doc).length === 1;
}

function toList(result: ReturnType<typeof validateRule>) {
  return result.ok ? { ok: true as const, rules: [result.rule] } : result;
}
