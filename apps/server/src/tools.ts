import type { Clock, KnowledgeGraph, MessageBus, PrincipalDirectory, SearchProvider, ToolDefinition } from '@toolgate/contracts';
import { calculatorTool } from '@toolgate/tool-calculator';
import { httpFetchTool } from '@toolgate/tool-http-fetch';
import { createMemoryTools } from '@toolgate/tool-memory';
import { createMessagingTools } from '@toolgate/tool-messaging';
import { createShellTools } from '@toolgate/tool-shell';
import { createWebSearchTool } from '@toolgate/tool-web-search';
import { workspaceFileTools } from '@toolgate/tool-workspace-files';
import type { ServerConfig, ShellTier } from './config.js';

/** What first-party tools need from the composition root. */
export interface ToolDeps {
  readonly config: ServerConfig;
  readonly searchProvider: SearchProvider;
  readonly bus: MessageBus;
  readonly graph: KnowledgeGraph;
  readonly clock: Clock;
  readonly directory: PrincipalDirectory;
  /** The tier `bash` and `git` run at; undefined leaves them out (their tier cannot run here). */
  readonly shellTier: ShellTier | undefined;
}

/**
 * The composition root's tool list: step 3 of adding a tool is one line here. The gateway
 * enforces everything else from each tool's manifest.
 */
export function firstPartyTools(deps: ToolDeps): ToolDefinition[] {
  return [
    calculatorTool,
    httpFetchTool,
    createWebSearchTool({ provider: deps.searchProvider, defaultMaxResults: deps.config.webSearch.maxResults }),
    ...workspaceFileTools,
    ...(deps.shellTier === undefined ? [] : createShellTools({ tier: deps.shellTier })),
    ...createMessagingTools({ bus: deps.bus, clock: deps.clock, directory: deps.directory }),
    ...createMemoryTools({ graph: deps.graph, clock: deps.clock }),
  ];
}
