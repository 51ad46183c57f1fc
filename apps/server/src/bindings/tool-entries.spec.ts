import { token, type Token, type ToolDefinition } from '@toolgate/contracts';
import { calculatorTool } from '@toolgate/tool-calculator';
import { describe, expect, it } from 'vitest';
import { Binder } from './binder.js';
import { buildTools, tokensNeeded, withNeeds } from './tool-entries.js';

/** A tool whose name says what it was made from. */
function named(name: string): ToolDefinition {
  return { ...calculatorTool, manifest: { ...calculatorTool.manifest, name } };
}

const Bus: Token<{ readonly id: string }> = token('Bus');
const Clock: Token<{ readonly now: () => number }> = token('Clock');

describe('the tool list', () => {
  const entries = [
    named('plain'),
    [named('one_of_two'), named('two_of_two')],
    withNeeds({ needs: { bus: Bus }, create: ({ bus }) => named(`posts_to_${bus.id}`) }),
    withNeeds({ needs: { clock: Clock, bus: Bus }, create: ({ bus, clock }) => [named(`reads_${bus.id}_at_${clock.now()}`)] }),
  ];

  it('names each token once, in the order the entries first need it', () => {
    expect(tokensNeeded(entries)).toEqual([Bus, Clock]);
  });

  it('gives each entry the values of the tokens it named, under its own names, and keeps the list order', () => {
    const tools = buildTools(entries, [{ id: 'bus1' }, { now: () => 42 }]);
    expect(tools.map((t) => t.manifest.name)).toEqual(['plain', 'one_of_two', 'two_of_two', 'posts_to_bus1', 'reads_bus1_at_42']);
  });

  it('is resolved through the container: every entry gets the bound adapters', async () => {
    const binder = new Binder();
    binder.constant(Bus, { id: 'sqlite' });
    binder.resolved(Clock, {}, async () => ({ now: () => 7 }));
    const Tools: Token<ToolDefinition[]> = token('Tools');
    binder.resolvedFromList(Tools, tokensNeeded(entries), (values) => buildTools(entries, values));
    expect((await binder.get(Tools)).map((t) => t.manifest.name)).toEqual(['plain', 'one_of_two', 'two_of_two', 'posts_to_sqlite', 'reads_sqlite_at_7']);
  });
});
