import { hash } from 'node:crypto';
import type { JsonObject, JsonValue } from '@toolgate/contracts';

/**
 * JSON with object keys sorted (by UTF-16 code units) and no whitespace, so equal values always
 * serialize to equal text. Keys whose value is `undefined` are left out, as `JSON.stringify`
 * does; anything that is not JSON (a function, a bigint, a non-finite number) is refused.
 */
export function canonicalJson(value: JsonValue): string {
  return write(value);
}

function write(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonical JSON cannot hold a non-finite number');
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : write(item))).join(',')}]`;
      const object = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const key of Object.keys(object).sort()) {
        const item = object[key];
        if (item !== undefined) parts.push(`${JSON.stringify(key)}:${write(item)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
}

/** `sha256:<hex>` of a string's UTF-8 bytes (one-shot `hash`: a third of `createHash`'s cost per call). */
export function sha256Digest(text: string): string {
  return `sha256:${hash('sha256', text, 'hex')}`;
}

/** What an approval is bound to: who asks to run which exact tool version with which (repaired) arguments. */
export interface ApprovalPayload {
  readonly tenant: string;
  readonly principal: string;
  readonly tool: string;
  readonly version: string;
  readonly args: JsonObject;
}

/** `sha256:<hex>` of the canonical JSON of {tenant, principal, tool, version, args}. */
export function payloadDigest(payload: ApprovalPayload): string {
  const { tenant, principal, tool, version, args } = payload;
  return sha256Digest(canonicalJson({ tenant, principal, tool, version, args }));
}

/** `sha256:<hex>` of the canonical JSON of the arguments: what the audit keeps instead of them. */
export function argsDigest(args: JsonObject): string {
  return sha256Digest(canonicalJson(args));
}
