import { flattenText, token, type Token, type ToolDefinition } from '@toolgate/contracts';
import { ToolRegistry } from '@toolgate/gateway';
import { FIRST_PARTY_TOOLS } from '../tools.js';
import { LogToken, McpSourcesToken, ToolRegistryToken } from '../tokens.js';
import type { Binder } from './binder.js';
import { buildTools, tokensNeeded } from './tool-entries.js';

const FirstPartyToolsToken: Token<readonly ToolDefinition[]> = token('FirstPartyTools');

/**
 * The tool registry: the first-party tools of the tool list (each entry gets the ports it names,
 * resolved here) and the tools of every MCP server that started.
 */
export function bindTools(binder: Binder): void {
  binder.resolvedFromList(FirstPartyToolsToken, tokensNeeded(FIRST_PARTY_TOOLS), (values) => buildTools(FIRST_PARTY_TOOLS, values));
  binder.resolved(ToolRegistryToken, { tools: FirstPartyToolsToken, sources: McpSourcesToken, log: LogToken }, ({ tools, sources, log }) => {
    // The log hears once per MCP server that reached its tool pin bound (ADR 0069).
    const registry = new ToolRegistry(tools, { log: (message) => log('warn', flattenText(message, 2000)) });
    // The servers file is the operator's: a `risk: "low"` there is the explicit trust the registry asks for.
    for (const source of sources) registry.addSource(source, { trustLowRisk: source.config.risk === 'low' });
    // The reason quotes the server's schema (ajv's text too): one line, so it cannot forge log lines.
    for (const rejected of registry.rejected()) log('warn', flattenText(`tool '${rejected.tool}' of ${rejected.source} rejected: ${rejected.reason}`, 2000));
    return registry;
  });
}
