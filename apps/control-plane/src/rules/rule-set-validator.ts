import { type EventFields, type FieldType, formatProblem, type Rule, type RuleLimits, validateRules } from '@weir/rules';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import type { InvalidParameter } from '../problems/problem-details';

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
/** The title @weir/rules' schema carries: a bundle declaring it is the fraud job, whose rules get semantic checks too. */
const FRAUD_RULE_TITLE = 'Weir fraud rule';
export const MAX_RULES_PER_SET = 1_000;

export type RuleSetValidation =
  | { readonly ok: true; readonly rules: readonly Record<string, unknown>[] }
  | { readonly ok: false; readonly errors: readonly InvalidParameter[] };

/**
 * A rule set document is `{ "rules": [ rule, ... ] }`; each rule is checked against the bundle manifest's
 * `rulesSchema` (ajv), and, when that schema is @weir/rules' fraud rule schema, by its semantic validation as well
 * (fields, operators, window limit, duplicate ids), whose messages say what to do. Every error names its field
 * (`rules[0].comparison`) and the problem. Rule ids must be unique: they are the keys of the job's rule state.
 */
export function validateRuleSet(document: unknown, rulesSchema: Record<string, unknown>): RuleSetValidation {
  if (!isObject(document)) return fail([{ path: '(root)', message: 'must be a JSON object { "rules": [ ... ] }' }]);
  const problems: { path: string; message: string }[] = [];
  for (const key of Object.keys(document)) if (key !== 'rules') problems.push({ path: key, message: 'is not a recognised field; a rule set has only "rules"' });
  const rules = document.rules;
  if (!Array.isArray(rules)) return fail([...problems, { path: 'rules', message: 'is required: an array of rules' }]);
  if (rules.length === 0) problems.push({ path: 'rules', message: 'must hold at least one rule (pause a rule with state PAUSED)' });
  if (rules.length > MAX_RULES_PER_SET) problems.push({ path: 'rules', message: `must hold at most ${MAX_RULES_PER_SET} rules` });

  // Set by the control plane: the version is the set's number, shadow is POST …/rules/{version}/shadow.
  rules.forEach((rule, i) => {
    if (isObject(rule) && 'shadow' in rule) problems.push({ path: `rules[${i}].shadow`, message: 'is set by the control plane: evaluate a version in shadow with POST …/rules/{version}/shadow' });
  });
  const check = compile(rulesSchema);
  const schemaProblems = rules.flatMap((rule, i) => (check(rule) ? [] : (check.errors ?? []).map((e) => schemaProblem(e, `rules[${i}]`))));
  const limits = rulesSchema.title === FRAUD_RULE_TITLE ? fraudLimitsOf(rulesSchema) : null;
  if (limits) {
    // The semantic messages are the more precise ones: keep the schema's only for fields they do not mention.
    const semantic = validateRules(rules, limits, 'rules');
    const named = semantic.ok ? [] : semantic.problems;
    const covered = new Set(named.map((p) => p.path));
    problems.push(...named, ...schemaProblems.filter((p) => !covered.has(p.path)));
  } else {
    problems.push(...schemaProblems, ...missingIds(rules), ...duplicateIds(rules));
  }
  return problems.length ? fail(dedupe(problems)) : { ok: true, rules: rules as Record<string, unknown>[] };
}

/** The job limits written into a fraud rules schema by rulesSchemaFor(): field names, numeric fields, max window. */
export function fraudLimitsOf(schema: Record<string, unknown>): RuleLimits | null {
  const props = schema.properties as Record<string, { items?: { enum?: unknown }; enum?: unknown; maximum?: unknown }> | undefined;
  const names = props?.groupingKeys?.items?.enum;
  const numeric = props?.aggregateField?.enum;
  const maxWindowMs = props?.windowMs?.maximum;
  if (!Array.isArray(names) || !Array.isArray(numeric) || typeof maxWindowMs !== 'number') return null;
  const fields: Record<string, FieldType> = {};
  for (const name of names) if (typeof name === 'string') fields[name] = numeric.includes(name) ? 'number' : 'string';
  return { fields: fields as EventFields, maxWindowMs };
}

export type { Rule };

/** Compiled schemas by their JSON text, oldest dropped first: a compile costs milliseconds, a swap should not. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 64;

function compile(schema: Record<string, unknown>): ValidateFunction {
  const text = JSON.stringify(schema);
  const hit = compiled.get(text);
  if (hit) return hit;
  // An Ajv per schema: tenants' schemas must not share an instance (a second schema with the same $id is refused).
  const options = { strict: false, allErrors: true, validateFormats: false } as const;
  const ajv = typeof schema.$schema === 'string' && DRAFT_07.test(schema.$schema) ? new Ajv(options) : new Ajv2020(options);
  const fn = ajv.compile(schema);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(text, fn);
  return fn;
}

function schemaProblem(e: ErrorObject, base: string): { path: string; message: string } {
  const at = base + e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`)).join('');
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperties') return { path: `${at}.${String(params.additionalProperty)}`, message: 'is not a recognised field' };
  if (e.keyword === 'required') return { path: `${at}.${String(params.missingProperty)}`, message: 'is required' };
  if (e.keyword === 'enum') return { path: at, message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
  return { path: at, message: e.message ?? 'is invalid' };
}

/** The control plane keys rule messages by id and deletes rules a new version drops: every rule needs one. */
function missingIds(rules: unknown[]): { path: string; message: string }[] {
  return rules.flatMap((rule, i) =>
    isObject(rule) && typeof rule.ruleId === 'string' && rule.ruleId.length > 0 ? [] : [{ path: `rules[${i}].ruleId`, message: 'is required: a non-empty string naming the rule' }],
  );
}

function duplicateIds(rules: unknown[]): { path: string; message: string }[] {
  const seen = new Map<unknown, number>();
  const out: { path: string; message: string }[] = [];
  rules.forEach((rule, i) => {
    const id = isObject(rule) ? rule.ruleId : undefined;
    if (id === undefined) return;
    if (seen.has(id)) out.push({ path: `rules[${i}].ruleId`, message: `repeats rules[${seen.get(id)}]'s id ${JSON.stringify(id)}` });
    else seen.set(id, i);
  });
  return out;
}

function dedupe(problems: { path: string; message: string }[]): { path: string; message: string }[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = formatProblem(p);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function fail(problems: { path: string; message: string }[]): RuleSetValidation {
  return { ok: false, errors: problems.map((p) => ({ in: 'body' as const, name: p.path, reason: p.message })) };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
