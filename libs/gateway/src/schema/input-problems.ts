import type { JsonObject, JsonSchema, JsonValue } from '@toolgate/contracts';
import { displayPath } from './input-repair.js';
import type { SchemaError } from './schema-compiler.js';

const MAX_PROBLEMS = 20;

/**
 * One sentence per distinct schema violation, naming the argument (or output field) and never
 * echoing its value.
 */
export function describeProblems(errors: readonly SchemaError[] | null | undefined, of: 'argument' | 'field' = 'argument'): string[] {
  const problems = new Set<string>();
  for (const e of errors ?? []) {
    const where = e.instancePath === '' ? (of === 'argument' ? 'arguments' : 'output') : displayPath(e.instancePath);
    const inside = e.instancePath === '' ? '' : ` in '${where}'`;
    switch (e.keyword) {
      case 'required':
        problems.add(`missing required ${of} '${String(e.params['missingProperty'])}'${inside}`);
        break;
      case 'additionalProperties':
        problems.add(`unknown ${of} '${String(e.params['additionalProperty'])}'${inside}`);
        break;
      case 'type':
        problems.add(`'${where}' must be ${String(e.params['type'])}`);
        break;
      case 'enum':
        problems.add(`'${where}' must be one of: ${listValues(e.params['allowedValues'])}`);
        break;
      case 'const':
        problems.add(`'${where}' must be ${JSON.stringify(e.params['allowedValue'])}`);
        break;
      default:
        problems.add(`'${where}' ${e.message ?? 'is invalid'}`);
    }
    if (problems.size >= MAX_PROBLEMS) break;
  }
  return [...problems];
}

/** A parameter of a tool as an agent needs to know it. */
export interface ParameterInfo extends JsonObject {
  name: string;
  type: string;
  required: boolean;
}

/** The top-level parameters of an input schema, with their types, whether required, and enum values. */
export function describeParameters(schema: JsonSchema): ParameterInfo[] {
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return [];
  const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
  return Object.entries(properties).map(([name, property]) => {
    const p = typeof property === 'object' && property !== null && !Array.isArray(property) ? property : {};
    const info: ParameterInfo = { name, type: typeName(p), required: required.has(name) };
    if (Array.isArray(p['enum'])) info['enum'] = p['enum'];
    return info;
  });
}

/** `query: string (required); mode: string, one of "fast", "slow"`. */
export function parametersHint(parameters: readonly ParameterInfo[]): string {
  if (parameters.length === 0) return 'This tool takes no parameters.';
  const parts = parameters.map((p) => {
    const allowed = Array.isArray(p['enum']) ? `, one of ${listValues(p['enum'])}` : '';
    return `${p.name}: ${p.type}${p.required ? ' (required)' : ''}${allowed}`;
  });
  return `Valid parameters: ${parts.join('; ')}.`;
}

function typeName(schema: { [key: string]: JsonValue | undefined }): string {
  const type = schema['type'];
  if (typeof type === 'string') {
    const items = schema['items'];
    if (type === 'array' && typeof items === 'object' && items !== null && !Array.isArray(items) && typeof items['type'] === 'string') {
      return `array of ${items['type']}`;
    }
    return type;
  }
  if (Array.isArray(type)) return type.join(' | ');
  if (Array.isArray(schema['enum'])) return 'enum';
  return 'any';
}

/** Enum values listed in one message; a schema's enum may hold thousands (issue 9). */
export const MAX_LISTED_VALUES = 20;

function listValues(values: unknown): string {
  if (!Array.isArray(values)) return String(values);
  // Each value shown is cut short too: one entry may be a long string or a large object.
  const shown = values.slice(0, MAX_LISTED_VALUES).map((v) => {
    const text = JSON.stringify(v) ?? String(v);
    return text.length > 100 ? `${text.slice(0, 99)}…` : text;
  });
  return values.length > MAX_LISTED_VALUES ? `${shown.join(', ')}, … ${values.length - MAX_LISTED_VALUES} more` : shown.join(', ');
}
