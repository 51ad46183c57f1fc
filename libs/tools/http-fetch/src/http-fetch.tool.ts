import {
  ToolError,
  type HttpResponse,
  type JsonObject,
  type JsonValue,
  type ToolContext,
  type ToolDefinition,
  type ToolManifest,
} from '@toolgate/contracts';
import { decodeBody } from './decode-body.js';

const MiB = 1024 * 1024;
export const HTTP_FETCH_TIMEOUT_MS = 30_000;
export const HTTP_FETCH_MAX_BYTES = 5 * MiB;
export const HTTP_FETCH_DEFAULT_MAX_BYTES = 1 * MiB;
/** Below the tool's own deadline, so a slow server is reported as such, not as a tool timeout. */
export const HTTP_FETCH_DEFAULT_TIMEOUT_MS = 20_000;

/** Request headers an agent may set. Anything that carries identity (cookies, auth) is excluded. */
export const HTTP_FETCH_REQUEST_HEADERS = ['accept', 'accept-language', 'if-none-match', 'if-modified-since'] as const;

/** Response headers worth passing on; cookies, auth challenges and tracking headers are dropped. */
const RESPONSE_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-language',
  'content-disposition',
  'content-encoding',
  'last-modified',
  'etag',
  'cache-control',
  'expires',
  'age',
  'date',
  'location',
  'retry-after',
  'allow',
  'vary',
  'link',
]);
const MAX_HEADER_VALUE = 1024;

const headerValue = { type: 'string', maxLength: 256, pattern: '^[\\x20-\\x7E]*$' } as const;

export const httpFetchManifest: ToolManifest = {
  name: 'http_fetch',
  version: '1.0.0',
  description:
    'Fetch one http(s) URL with GET and return its status, selected headers and body as text. Redirects are not followed (the result gives the location). The body is cut at max_bytes. Binary content is described, not returned.',
  provenance: 'first-party',
  risk: 'high',
  permissions: [{ type: 'network', scope: '*' }],
  input: {
    type: 'object',
    properties: {
      url: {
        type: 'string',
        format: 'uri',
        maxLength: 2048,
        pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
        description: 'Absolute http:// or https:// URL to fetch.',
      },
      headers: {
        type: 'object',
        description: 'Optional request headers (lower-case names); only these are accepted.',
        properties: Object.fromEntries(HTTP_FETCH_REQUEST_HEADERS.map((name) => [name, headerValue])),
        additionalProperties: false,
      },
      max_bytes: {
        type: 'integer',
        minimum: 1,
        maximum: HTTP_FETCH_MAX_BYTES,
        default: HTTP_FETCH_DEFAULT_MAX_BYTES,
        description: 'Stop reading the body after this many bytes (default 1 MiB, at most 5 MiB).',
      },
      timeout_ms: {
        type: 'integer',
        minimum: 100,
        maximum: HTTP_FETCH_TIMEOUT_MS,
        default: HTTP_FETCH_DEFAULT_TIMEOUT_MS,
        description: 'Time limit for connect, headers and body together, in milliseconds.',
      },
    },
    required: ['url'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      url: { type: 'string' },
      status: { type: 'integer' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      content_type: { type: 'string' },
      kind: { enum: ['text', 'binary', 'empty'] },
      charset: { type: 'string' },
      body: { type: 'string' },
      bytes: { type: 'integer', minimum: 0 },
      truncated: { type: 'boolean' },
      location: { type: 'string' },
      notes: { type: 'array', items: { type: 'string' } },
    },
    required: ['url', 'status', 'headers', 'kind', 'body', 'bytes', 'truncated'],
    additionalProperties: false,
  },
  egress: { urlArg: 'url' },
  tier: 'inprocess',
  timeoutMs: HTTP_FETCH_TIMEOUT_MS,
  // 5 MiB of text plus JSON escaping and the envelope.
  maxOutputBytes: 8 * MiB,
};

interface FetchArgs {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** Re-checks the arguments: the gateway validates them, but a handler never relies on that alone. */
function readArgs(args: JsonObject): FetchArgs {
  const { url, headers, max_bytes: maxBytes, timeout_ms: timeoutMs } = args;
  if (typeof url !== 'string' || url.length === 0 || url.length > 2048) {
    throw new ToolError('url must be an http(s) URL of at most 2048 characters', 'INVALID_ARGUMENT');
  }
  const chosen: Record<string, string> = {};
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      throw new ToolError('headers must be an object of header names to values', 'INVALID_ARGUMENT');
    }
    for (const [name, value] of Object.entries(headers)) {
      if (!(HTTP_FETCH_REQUEST_HEADERS as readonly string[]).includes(name)) {
        throw new ToolError(
          `header '${name.slice(0, 64)}' is not allowed; allowed headers: ${HTTP_FETCH_REQUEST_HEADERS.join(', ')}`,
          'INVALID_ARGUMENT',
        );
      }
      if (typeof value !== 'string') throw new ToolError(`header '${name}' must be a string`, 'INVALID_ARGUMENT');
      chosen[name] = value;
    }
  }
  return {
    url,
    headers: chosen,
    maxBytes: boundedInteger(maxBytes, 'max_bytes', 1, HTTP_FETCH_MAX_BYTES, HTTP_FETCH_DEFAULT_MAX_BYTES),
    timeoutMs: boundedInteger(timeoutMs, 'timeout_ms', 100, HTTP_FETCH_TIMEOUT_MS, HTTP_FETCH_DEFAULT_TIMEOUT_MS),
  };
}

function boundedInteger(value: JsonValue | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ToolError(`${name} must be an integer from ${min} to ${max}`, 'INVALID_ARGUMENT');
  }
  return value;
}

/** Builds the agent-facing result: filtered headers, decoded text, and notes on anything cut or skipped. */
export function describeResponse(response: HttpResponse, maxBytes: number): JsonObject {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (RESPONSE_HEADERS.has(name)) headers[name] = value.length > MAX_HEADER_VALUE ? `${value.slice(0, MAX_HEADER_VALUE)}…` : value;
  }
  const contentType = response.headers['content-type'];
  const decoded = decodeBody(response.body, contentType, response.truncated);
  const notes = [...decoded.notes];
  if (response.truncated) notes.push(`body cut at ${maxBytes} bytes (max_bytes); the resource is larger`);

  const result: JsonObject = {
    url: response.url,
    status: response.status,
    headers,
    kind: decoded.kind,
    body: decoded.text,
    bytes: response.body.length,
    truncated: response.truncated,
  };
  if (contentType !== undefined) result['content_type'] = contentType;
  if (decoded.charset !== undefined) result['charset'] = decoded.charset;
  const location = response.headers['location'];
  if (response.status >= 300 && response.status < 400 && location !== undefined) {
    result['location'] = absolute(location, response.url);
    notes.push('redirect not followed: fetch the location with a new call if you need it (it passes the egress check again)');
  }
  if (notes.length > 0) result['notes'] = notes;
  return result;
}

function absolute(location: string, base: string): string {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}

/** `http_fetch`: one guarded GET, never following redirects, body capped and decoded. */
export const httpFetchTool: ToolDefinition = {
  manifest: httpFetchManifest,
  handler: {
    async invoke(args: JsonObject, ctx: ToolContext): Promise<JsonValue> {
      if (!ctx.http) throw new ToolError('network permission not granted', 'NETWORK_NOT_GRANTED');
      const { url, headers, maxBytes, timeoutMs } = readArgs(args);
      const response = await ctx.http.request({ url, method: 'GET', headers, maxBytes, timeoutMs, signal: ctx.signal });
      return describeResponse(response, maxBytes);
    },
  },
};
