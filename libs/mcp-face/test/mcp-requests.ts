/** Where the face's specs address it; the face reads no host from it. */
export const MCP_URL = 'http://127.0.0.1/mcp';

/**
 * A POST to the face as a streamable-HTTP client sends one: a JSON body, both answer forms
 * accepted, then the test's own headers (which may replace those two). Without a body the
 * request has none, for specs that hand the face the parsed message themselves.
 */
export function mcpPost(body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Request {
  return new Request(MCP_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(signal ? { signal } : {}),
  });
}
