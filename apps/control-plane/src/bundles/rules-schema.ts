import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

/**
 * Compiles a job's rules JSON Schema to prove it is usable; returns the reason when it is not. Draft 2020-12 unless
 * `$schema` names draft-07. A fresh Ajv per call: schemas come from many tenants, and a shared instance would keep
 * every one (and refuse a second schema with the same `$id`). Unknown keywords are errors (they are usually typos);
 * formats are not validated here (no format vocabulary is installed), so an unknown `format` is accepted.
 */
export function rulesSchemaProblem(schema: Record<string, unknown>): string | null {
  const options = { strict: true, strictTypes: false, strictTuples: false, strictRequired: false, validateFormats: false, allErrors: false } as const;
  const ajv = typeof schema.$schema === 'string' && DRAFT_07.test(schema.$schema) ? new Ajv(options) : new Ajv2020(options);
  try {
    ajv.compile(schema);
    return null;
  } catch (err) {
    return `is not a usable JSON Schema: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
  }
}
