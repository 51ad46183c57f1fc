import { calculatorTool } from '@toolgate/tool-calculator';
import type { SearchProvider, ToolDefinition } from '@toolgate/contracts';
import type { ServerConfig } from './config.js';

/** What first-party tools need from the composition root. */
export interface ToolDeps {
  readonly config: ServerConfig;
  readonly searchProvider: SearchProvider;
}

/**
 * The composition root's tool list: step 3 of adding a tool is one line here. The gateway
 * enforces everything else from each tool's manifest.
 */
export function firstPartyTools(_deps: ToolDeps): ToolDefinition[] {
  return [calculatorTool];
}
