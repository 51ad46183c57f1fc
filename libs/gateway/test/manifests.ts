import type { ToolManifest } from '@toolgate/contracts';

/**
 * A valid first-party, low-risk, in-process manifest with an empty closed input schema, changed
 * only where the test says, so a spec names just the fields its case is about.
 */
export function manifestOf(over: Partial<ToolManifest> & { name: string }): ToolManifest {
  return {
    version: '1.0.0',
    description: `Does ${over.name}.`,
    provenance: 'first-party',
    risk: 'low',
    permissions: [],
    input: { type: 'object', properties: {}, additionalProperties: false },
    output: { type: 'object' },
    tier: 'inprocess',
    timeoutMs: 1000,
    ...over,
  };
}
