import type { ToolDefinition } from '@toolgate/contracts';
import { calculatorTool } from '@toolgate/tool-calculator';

/** A tool that runs until its signal fires, recording when, so a test can see a cancellation or disconnect reach it. */
export function slowTool(stopped: { at?: number }): ToolDefinition {
  return {
    manifest: { ...calculatorTool.manifest, name: 'slow', description: 'Waits until cancelled.', timeoutMs: 10_000, input: { type: 'object', properties: {}, additionalProperties: false } },
    handler: {
      invoke: (_args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            stopped.at = Date.now();
            reject(new Error('aborted'));
          });
        }),
    },
  };
}
