import {
  ToolError,
  type JsonObject,
  type JsonValue,
  type SearchProvider,
  type ToolContext,
  type ToolDefinition,
  type ToolManifest,
} from '@toolgate/contracts';

/** The most results one call may ask for; the schema's `maximum`, so the gateway's repair clamps to it. */
export const WEB_SEARCH_MAX_RESULTS = 10;
export const WEB_SEARCH_MAX_QUERY_LENGTH = 500;
export const WEB_SEARCH_TIMEOUT_MS = 20_000;

export interface WebSearchToolOptions {
  /** The configured backend; its `host` becomes the manifest's only egress host. */
  readonly provider: SearchProvider;
  /** Results when the call does not say (`TOOLGATE_WEB_SEARCH_MAX_RESULTS`, 1–10; 5 by default). */
  readonly defaultMaxResults: number;
}

/**
 * Builds `web_search` around one search provider. The manifest is derived from the provider, so
 * the egress gate checks exactly the host the provider will contact, and the permission scope is
 * that host (a `network:*` grant covers it too).
 */
export function createWebSearchTool(options: WebSearchToolOptions): ToolDefinition {
  const { provider, defaultMaxResults } = options;
  if (!Number.isInteger(defaultMaxResults) || defaultMaxResults < 1 || defaultMaxResults > WEB_SEARCH_MAX_RESULTS) {
    throw new Error(`web_search: the default result count must be an integer from 1 to ${WEB_SEARCH_MAX_RESULTS}, got ${defaultMaxResults}`);
  }
  if (!provider.host) throw new Error(`web_search: the search provider '${provider.name}' names no host`);

  const manifest: ToolManifest = {
    name: 'web_search',
    version: '1.0.0',
    description: `Search the web (via ${provider.name}) and return up to ${WEB_SEARCH_MAX_RESULTS} results, each a title, URL and snippet.`,
    provenance: 'first-party',
    risk: 'medium',
    permissions: [{ type: 'network', scope: provider.host }],
    input: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          minLength: 1,
          maxLength: WEB_SEARCH_MAX_QUERY_LENGTH,
          description: 'What to search for.',
        },
        max_results: {
          type: 'integer',
          minimum: 1,
          maximum: WEB_SEARCH_MAX_RESULTS,
          default: defaultMaxResults,
          description: `How many results to return (1–${WEB_SEARCH_MAX_RESULTS}, default ${defaultMaxResults}).`,
        },
      },
      required: ['query'],
      // Open on purpose: with ignoreUnknownArgs the gateway drops invented parameters
      // (`language`, `safe_search`, …) instead of refusing the call.
    },
    output: {
      type: 'object',
      properties: {
        results: {
          type: 'array',
          maxItems: WEB_SEARCH_MAX_RESULTS,
          items: {
            type: 'object',
            properties: { title: { type: 'string' }, url: { type: 'string' }, snippet: { type: 'string' } },
            required: ['title', 'url', 'snippet'],
            additionalProperties: false,
          },
        },
        provider: { type: 'string' },
      },
      required: ['results', 'provider'],
      additionalProperties: false,
    },
    ignoreUnknownArgs: true,
    egress: { hosts: [provider.host] },
    tier: 'inprocess',
    timeoutMs: WEB_SEARCH_TIMEOUT_MS,
  };

  return {
    manifest,
    handler: {
      async invoke(args: JsonObject, ctx: ToolContext): Promise<JsonValue> {
        if (!ctx.http) throw new ToolError('network permission not granted', 'NETWORK_NOT_GRANTED');
        const query = readQuery(args['query']);
        const maxResults = readMaxResults(args['max_results'], defaultMaxResults);
        const found = await provider.search(query, { maxResults, http: ctx.http, signal: ctx.signal });
        // Copy the three fields only: a provider's extra properties never reach the agent.
        const results = found.slice(0, maxResults).map(({ title, url, snippet }) => ({ title, url, snippet }));
        return { results, provider: provider.name };
      },
    },
  };
}

function readQuery(value: JsonValue | undefined): string {
  const query = typeof value === 'string' ? value.trim() : '';
  if (query.length === 0) throw new ToolError('query must be a non-empty string', 'INVALID_ARGUMENT');
  if (query.length > WEB_SEARCH_MAX_QUERY_LENGTH) {
    throw new ToolError(`query must be at most ${WEB_SEARCH_MAX_QUERY_LENGTH} characters`, 'INVALID_ARGUMENT');
  }
  return query;
}

/** The gateway already clamped a validated call; a direct call is clamped the same way. */
function readMaxResults(value: JsonValue | undefined, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ToolError(`max_results must be an integer from 1 to ${WEB_SEARCH_MAX_RESULTS}`, 'INVALID_ARGUMENT');
  }
  return Math.min(WEB_SEARCH_MAX_RESULTS, Math.max(1, Math.trunc(value)));
}
