import { ClockToken, KnowledgeGraphToken, MessageBusToken, PrincipalDirectoryToken, SearchProviderToken } from '@toolgate/contracts';
import { calculatorTool } from '@toolgate/tool-calculator';
import { httpFetchTool } from '@toolgate/tool-http-fetch';
import { createMemoryTools } from '@toolgate/tool-memory';
import { createMessagingTools } from '@toolgate/tool-messaging';
import { createShellTools } from '@toolgate/tool-shell';
import { createWebSearchTool } from '@toolgate/tool-web-search';
import { workspaceFileTools } from '@toolgate/tool-workspace-files';
import { withNeeds, type ToolEntry } from './bindings/tool-entries.js';
import { ConfigToken, ShellExecutorToken } from './tokens.js';

/**
 * The composition root's tool list: step 3 of adding a tool is one entry here. A tool (or a list
 * of tools) that needs nothing is listed as it is; one made from ports names them with their
 * tokens in `needs` and receives them, by the same names, in `create`. The gateway enforces
 * everything else from each tool's manifest.
 */
export const FIRST_PARTY_TOOLS: readonly ToolEntry[] = [
  calculatorTool,
  httpFetchTool,
  withNeeds({
    needs: { provider: SearchProviderToken, config: ConfigToken },
    create: ({ provider, config }) => createWebSearchTool({ provider, defaultMaxResults: config.webSearch.maxResults }),
  }),
  workspaceFileTools,
  // Left out when their tier cannot run here (said at start).
  withNeeds({ needs: { shell: ShellExecutorToken }, create: ({ shell }) => (shell === undefined ? [] : createShellTools({ executor: shell })) }),
  withNeeds({
    needs: { bus: MessageBusToken, clock: ClockToken, directory: PrincipalDirectoryToken },
    create: ({ bus, clock, directory }) => createMessagingTools({ bus, clock, directory }),
  }),
  withNeeds({ needs: { graph: KnowledgeGraphToken, clock: ClockToken }, create: ({ graph, clock }) => createMemoryTools({ graph, clock }) }),
];
