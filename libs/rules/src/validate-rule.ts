import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import { AGGREGATE_FUNCTIONS, COMPARISON_SYMBOLS, RULE_STATES, type Rule, type RuleLimits } from './rule';
import { ruleJsonSchema } from './rules-schema';

/** One thing wrong with a rule: where (`rules[0].comparison`) and what, in words a rule author can act on. */
export interface RuleProblem {
  readonly path: string;
  readonly message: string;
}

export type RuleValidation = { readonly ok: true; readonly rule: Rule } | { readonly ok: false; readonly problems: readonly RuleProblem[] };

export class RuleValidationError extends Error {
  override readonly name = 'RuleValidationError';
  constructor(readonly problems: readonly RuleProblem[]) {
    super(problems.map(formatProblem).join('\n'));
  }
}

export function formatProblem(problem: RuleProblem): string {
  return `${problem.path}: ${problem.message}`;
}

const checkSchema = new Ajv2020({ allErrors: true, strict: true }).compile(ruleJsonSchema);

/** Operators people type by habit, and the one they meant. */
const OPERATOR_HINTS: Readonly<Record<string, string>> = { '=>': '>=', '=<': '<=', '≥': '>=', '≤': '<=', '≠': '!=', '==': '=', '===': '=', '<>': '!=', '!==': '!=' };

/** Validates one rule: its structure (JSON Schema), then what the schema cannot express (fields, limits). */
export function validateRule(value: unknown, limits: RuleLimits, path = 'rule'): RuleValidation {
  const problems = checkSchema(value) ? [] : (checkSchema.errors ?? []).map((e) => schemaProblem(e, value, path));
  if (isObject(value)) problems.push(...semanticProblems(value, limits, path));
  return problems.length === 0 ? { ok: true, rule: value as unknown as Rule } : { ok: false, problems: dedupe(problems) };
}

/** Validates a list of rules (`rules[i]…` paths) and that no rule id appears twice. */
export function validateRules(values: unknown, limits: RuleLimits, path = 'rules'): { ok: true; rules: Rule[] } | { ok: false; problems: RuleProblem[] } {
  if (!Array.isArray(values)) return { ok: false, problems: [{ path, message: 'must be an array of rules' }] };
  const problems: RuleProblem[] = [];
  const seen = new Map<string, number>();
  values.forEach((value, i) => {
    const result = validateRule(value, limits, `${path}[${i}]`);
    if (!result.ok) problems.push(...result.problems);
    const id = isObject(value) && typeof value.ruleId === 'string' ? value.ruleId : undefined;
    if (id !== undefined && seen.has(id)) problems.push({ path: `${path}[${i}].ruleId`, message: `"${id}" is already used by ${path}[${seen.get(id)}]` });
    else if (id !== undefined) seen.set(id, i);
  });
  return problems.length === 0 ? { ok: true, rules: values as Rule[] } : { ok: false, problems };
}

/** Throws a RuleValidationError naming every problem; returns the rule typed otherwise. */
export function assertValidRule(value: unknown, limits: RuleLimits, path = 'rule'): Rule {
  const result = validateRule(value, limits, path);
  if (!result.ok) throw new RuleValidationError(result.problems);
  return result.rule;
}

function semanticProblems(rule: Record<string, unknown>, limits: RuleLimits, path: string): RuleProblem[] {
  const problems: RuleProblem[] = [];
  const known = Object.keys(limits.fields).sort();
  const numeric = known.filter((f) => limits.fields[f] === 'number');
  if (Array.isArray(rule.groupingKeys)) {
    rule.groupingKeys.forEach((field, i) => {
      if (typeof field === 'string' && field.length > 0 && !(field in limits.fields)) {
        problems.push({ path: `${path}.groupingKeys[${i}]`, message: `unknown field "${field}"; the events have ${list(known)}` });
      }
    });
  }
  const fn = rule.function;
  const field = rule.aggregateField;
  if (typeof field === 'string' && field.length > 0) {
    if (!(field in limits.fields)) {
      problems.push({ path: `${path}.aggregateField`, message: `unknown field "${field}"; numeric fields are ${list(numeric)}` });
    } else if (limits.fields[field] !== 'number') {
      problems.push({ path: `${path}.aggregateField`, message: `"${field}" is a ${limits.fields[field]} field; ${String(fn)} needs a numeric one: ${list(numeric)}` });
    }
  } else if (field === undefined && typeof fn === 'string' && fn !== 'COUNT' && (AGGREGATE_FUNCTIONS as readonly string[]).includes(fn)) {
    problems.push({ path: `${path}.aggregateField`, message: `is required for ${fn} (only COUNT needs no field); numeric fields are ${list(numeric)}` });
  }
  if (typeof rule.windowMs === 'number' && rule.windowMs > limits.maxWindowMs) {
    problems.push({ path: `${path}.windowMs`, message: `${rule.windowMs} ms is longer than this job's limit of ${limits.maxWindowMs} ms` });
  }
  if (typeof rule.limit === 'number' && !Number.isFinite(rule.limit)) {
    problems.push({ path: `${path}.limit`, message: 'must be a finite number' });
  }
  return problems;
}

function schemaProblem(error: ErrorObject, root: unknown, path: string): RuleProblem {
  const at = path + pointerToPath(error.instancePath);
  const data = valueAt(root, error.instancePath);
  switch (error.keyword) {
    case 'required':
      return { path: `${at}.${String(error.params.missingProperty)}`, message: 'is required' };
    case 'additionalProperties':
      return {
        path: `${at}.${String(error.params.additionalProperty)}`,
        message: `unknown property; a rule has ${list(Object.keys(ruleJsonSchema.properties))}`,
      };
    case 'enum':
      return { path: at, message: enumMessage(error.instancePath, data) };
    case 'uniqueItems':
      return { path: at, message: `lists ${JSON.stringify((data as unknown[])[error.params.i as number])} twice` };
    case 'minItems':
      return { path: at, message: 'must name at least one field to group by' };
    case 'pattern':
      return { path: at, message: `${JSON.stringify(data)} is not a valid id (1-128 of A-Z, a-z, 0-9, ".", "_", "-", starting with a letter or digit)` };
    case 'type':
      return { path: at, message: `must be ${article(String(error.params.type))}, got ${describe(data)}` };
    default:
      return { path: at, message: error.message ?? `fails ${error.keyword}` };
  }
}

function enumMessage(pointer: string, data: unknown): string {
  const shown = JSON.stringify(data);
  if (pointer === '/comparison') {
    const hint = typeof data === 'string' ? OPERATOR_HINTS[data] : undefined;
    return `unknown operator ${shown}; use one of ${COMPARISON_SYMBOLS.join(', ')}${hint ? ` (did you mean "${hint}"?)` : ''}`;
  }
  if (pointer === '/function') return `unknown function ${shown}; use one of ${AGGREGATE_FUNCTIONS.join(', ')}`;
  if (pointer === '/state') return `unknown state ${shown}; use ${RULE_STATES.join(' or ')}`;
  return `${shown} is not allowed`;
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((token) => (/^\d+$/.test(token) ? `[${token}]` : `.${token}`))
    .join('');
}

function valueAt(root: unknown, pointer: string): unknown {
  let current = root;
  for (const token of pointer.split('/').slice(1)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[token.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return current;
}

function dedupe(problems: RuleProblem[]): RuleProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const id = formatProblem(p);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function list(names: readonly string[]): string {
  return names.length === 0 ? '(none)' : names.join(', ');
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isInteger(value)) return `${value}`;
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : `${typeof value} ${JSON.stringify(value)}`;
}
