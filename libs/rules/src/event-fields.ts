import type { EventFields, FieldType } from './rule';

export class EventSchemaError extends Error {
  override readonly name = 'EventSchemaError';
}

const TYPES: Readonly<Record<string, FieldType>> = { string: 'string', number: 'number', integer: 'number', boolean: 'boolean' };

/**
 * The fields rules may name, read from a JSON Schema of the job's events (`{ type: 'object', properties: {...} }`),
 * as a bundle can declare it. Only top-level scalar properties are fields; others are ignored.
 */
export function eventFieldsFromJsonSchema(schema: unknown): EventFields {
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) {
    throw new EventSchemaError('the event schema must be a JSON Schema object with "properties"');
  }
  const fields: Record<string, FieldType> = {};
  for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
    const type = (property as { type?: unknown } | null)?.type;
    const mapped = typeof type === 'string' ? TYPES[type] : undefined;
    if (mapped) fields[name] = mapped;
  }
  return fields;
}
