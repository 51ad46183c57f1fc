import type { Token, ToolDefinition } from '@toolgate/contracts';
import { namedValues, type Needs, type Resolved } from './binder.js';

/** Tools made from the ports they name: build one with {@link withNeeds}, which type-checks `create` against `needs`. */
export interface ToolsWithNeeds {
  readonly needs: Needs;
  /** Takes the values of `needs` under the same names (typed where `withNeeds` built it). */
  readonly create: (deps: never) => ToolDefinition | readonly ToolDefinition[];
}

/** One entry of the tool list: a tool, a list of tools, or tools made from ports. */
export type ToolEntry = ToolDefinition | readonly ToolDefinition[] | ToolsWithNeeds;

/**
 * An entry that needs ports: `needs` names each by token, and `create` receives their values by
 * the same names, so a misspelt name or a wrong type fails to compile.
 */
export function withNeeds<N extends Needs>(entry: {
  readonly needs: N;
  readonly create: (deps: Resolved<N>) => ToolDefinition | readonly ToolDefinition[];
}): ToolsWithNeeds {
  return entry;
}

function needsPorts(entry: ToolEntry): entry is ToolsWithNeeds {
  return 'needs' in entry && 'create' in entry;
}

/** Every token the entries need, each once, in the order they first appear. */
export function tokensNeeded(entries: readonly ToolEntry[]): Token<unknown>[] {
  return [...new Set(entries.filter(needsPorts).flatMap((entry) => Object.values(entry.needs)))];
}

/**
 * The tools of every entry, in list order. `values` are those of {@link tokensNeeded}`(entries)`,
 * in that order; each entry gets the ones it named.
 */
export function buildTools(entries: readonly ToolEntry[], values: readonly unknown[]): ToolDefinition[] {
  const tokens = tokensNeeded(entries);
  const valueOf = new Map(tokens.map((token, i) => [token, values[i]]));
  return entries.flatMap((entry): ToolDefinition | readonly ToolDefinition[] => {
    if (!needsPorts(entry)) return entry;
    const keys = Object.keys(entry.needs);
    const deps = namedValues(keys, keys.map((key) => valueOf.get(entry.needs[key]!)));
    return (entry.create as (deps: Record<string, unknown>) => ToolDefinition | readonly ToolDefinition[])(deps);
  });
}
