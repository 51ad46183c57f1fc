import { hash, randomUUID } from 'node:crypto';
import type { ToolPin, ToolPinStore } from '@toolgate/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { HOSTILE_STRINGS, useStore, type StoreFactory, type StoreUnderTest } from './store-under-test.js';

const T0 = Date.UTC(2030, 0, 1);
const KIB = 1024;
const MAX_DEFINITION_BYTES = 256 * KIB;

/**
 * A tool name no other test (or earlier run against the same database) uses: pins are global,
 * so tests sharing a database keep apart by name, as the other suites do by tenant.
 */
function freshTool(label = 'tool'): string {
  return `${label}_${randomUUID().replaceAll('-', '')}`;
}

/** `sha256:<hex>` of the text's UTF-8 bytes, as the port defines a pin's digest. */
function digestOf(text: string): string {
  return `sha256:${hash('sha256', text, 'hex')}`;
}

/**
 * A tool definition as canonical JSON: `JSON.stringify` writes no whitespace, and the keys are
 * written here already in sorted order (description, inputSchema, name; properties, type).
 */
function definitionOf(tool: string, description = 'Reads a file.'): string {
  return JSON.stringify({ description, inputSchema: { properties: { path: { type: 'string' } }, type: 'object' }, name: tool });
}

/** A well-formed pin of `tool`; `definition` (and so the digest) differs by `description`. */
function pinOf(tool: string, overrides: Partial<ToolPin> & { description?: string } = {}): ToolPin {
  const { description, ...fields } = overrides;
  const definition = fields.definition ?? definitionOf(tool, description);
  return {
    tool,
    provenance: 'mcp:files',
    digest: digestOf(definition),
    definition,
    pinnedAt: T0,
    pinnedBy: 'first-seen',
    ...fields,
  };
}

/** A pin whose `definition` is `text`, with the digest of that text, so only the definition is wrong. */
function withDefinition(tool: string, text: string): ToolPin {
  return pinOf(tool, { definition: text, digest: digestOf(text) });
}

/** Nested `{"a":…}` objects `depth` levels deep (the outermost is level 1), as canonical JSON. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
}

/**
 * The behaviour every `ToolPinStore` adapter must share. Tests use fresh tool names, so a factory
 * may hand out one database (or one store) to every test. Run it from each adapter's spec:
 * `describe('SqliteToolPinStore', () => testToolPinStore(async () => ({ store, close })))`.
 */
export function testToolPinStore(open: StoreFactory<ToolPinStore>): void {
  const opened = useStore(open);
  const store = () => opened.current();

  /** The refusal of `pin` by both writes: a TypeError naming `field`, short, never echoing `value`, nothing stored. */
  async function expectRefused(pin: ToolPin, field: RegExp, value?: unknown): Promise<void> {
    for (const write of [() => store().pinFirst(pin), () => store().replace(undefined, pin)]) {
      const error = await write().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, 'the write must be refused').toBeInstanceOf(TypeError);
      const message = (error as TypeError).message;
      expect(message).toMatch(field);
      expect(message.length).toBeLessThan(200);
      if (typeof value === 'string' && value.length > 0) expect(message).not.toContain(value);
      expect(message).not.toContain('\u0000');
    }
    if (typeof pin.tool === 'string') expect(await store().get(pin.tool)).toBeUndefined();
  }

  describe('pinFirst', () => {
    it('records a pin with exactly the given fields and returns it', async () => {
      const pin = pinOf(freshTool());
      expect(await store().pinFirst(pin)).toEqual(pin);
      expect(await store().get(pin.tool)).toEqual(pin);
      expect((await store().list()).filter((p) => p.tool === pin.tool)).toEqual([pin]);
    });

    it('keeps the first pin when called twice, and returns it to the second caller', async () => {
      const tool = freshTool();
      const first = pinOf(tool, { description: 'first' });
      const second = pinOf(tool, { description: 'second, a rug pull', pinnedAt: T0 + 5, pinnedBy: 'mallory' });
      await store().pinFirst(first);
      expect(await store().pinFirst(second)).toEqual(first);
      expect(await store().get(tool)).toEqual(first);
    });

    it('keeps only the port’s fields', async () => {
      const pin = pinOf(freshTool());
      const smuggled = { ...pin, tenant: 'acme', accepted: true } as ToolPin;
      expect(await store().pinFirst(smuggled)).toEqual(pin);
      expect(await store().get(pin.tool)).toEqual(pin);
    });

    it('returns copies: editing a returned pin changes nothing stored', async () => {
      const pin = pinOf(freshTool());
      const returned = (await store().pinFirst(pin)) as { -readonly [K in keyof ToolPin]: ToolPin[K] };
      returned.digest = digestOf('other');
      returned.definition = '{}';
      const read = (await store().get(pin.tool)) as { -readonly [K in keyof ToolPin]: ToolPin[K] };
      read.pinnedBy = 'mallory';
      expect(await store().get(pin.tool)).toEqual(pin);
    });

    it('agrees on one pin when 40 callers pin one tool at once, each with its own definition', async () => {
      const tool = freshTool();
      const candidates = Array.from({ length: 40 }, (_, i) => pinOf(tool, { description: `version ${i}`, pinnedAt: T0 + i }));
      const results = await Promise.all(candidates.map((pin) => store().pinFirst(pin)));
      const stored = await store().get(tool);
      expect(candidates).toContainEqual(stored);
      for (const result of results) expect(result).toEqual(stored);
    });
  });

  describe('replace', () => {
    it('replaces the pin when the expected digest is the current one', async () => {
      const tool = freshTool();
      const first = pinOf(tool, { description: 'first' });
      await store().pinFirst(first);
      const accepted = pinOf(tool, { description: 'changed', pinnedAt: T0 + 60_000, pinnedBy: 'alice' });
      expect(await store().replace(first.digest, accepted)).toBe(true);
      expect(await store().get(tool)).toEqual(accepted);
    });

    it('re-accepts the same definition, recording who and when', async () => {
      const tool = freshTool();
      const first = pinOf(tool);
      await store().pinFirst(first);
      const again = { ...first, pinnedAt: T0 + 1, pinnedBy: 'bob' };
      expect(await store().replace(first.digest, again)).toBe(true);
      expect(await store().get(tool)).toEqual(again);
    });

    it('changes nothing when the expected digest is stale', async () => {
      const tool = freshTool();
      const first = pinOf(tool, { description: 'first' });
      const second = pinOf(tool, { description: 'second', pinnedBy: 'alice' });
      await store().pinFirst(first);
      expect(await store().replace(first.digest, second)).toBe(true);
      // An operator who looked at `first` accepts a third definition: they did not see `second`.
      const third = pinOf(tool, { description: 'third', pinnedBy: 'bob' });
      expect(await store().replace(first.digest, third)).toBe(false);
      expect(await store().replace(digestOf('never pinned'), third)).toBe(false);
      expect(await store().get(tool)).toEqual(second);
    });

    it('creates the pin of an unpinned tool when no digest is expected', async () => {
      const pin = pinOf(freshTool(), { pinnedBy: 'alice' });
      expect(await store().replace(undefined, pin)).toBe(true);
      expect(await store().get(pin.tool)).toEqual(pin);
    });

    it('refuses an unpinned tool when a digest is expected, storing nothing', async () => {
      const pin = pinOf(freshTool());
      expect(await store().replace(pin.digest, pin)).toBe(false);
      expect(await store().get(pin.tool)).toBeUndefined();
    });

    it('refuses a pinned tool when no digest is expected, changing nothing', async () => {
      const tool = freshTool();
      const first = pinOf(tool, { description: 'first' });
      await store().pinFirst(first);
      expect(await store().replace(undefined, pinOf(tool, { description: 'second' }))).toBe(false);
      expect(await store().get(tool)).toEqual(first);
    });

    it('lets exactly one of 40 concurrent replacements from the same digest win', async () => {
      const tool = freshTool();
      const first = pinOf(tool, { description: 'first' });
      await store().pinFirst(first);
      const candidates = Array.from({ length: 40 }, (_, i) => pinOf(tool, { description: `accepted ${i}`, pinnedBy: `operator-${i}` }));
      const outcomes = await Promise.all(candidates.map((pin) => store().replace(first.digest, pin)));
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect(await store().get(tool)).toEqual(candidates[outcomes.indexOf(true)]);
    });

    it('lets exactly one of 40 concurrent first acceptances of an unpinned tool win', async () => {
      const tool = freshTool();
      const candidates = Array.from({ length: 40 }, (_, i) => pinOf(tool, { description: `accepted ${i}`, pinnedBy: `operator-${i}` }));
      const outcomes = await Promise.all(candidates.map((pin) => store().replace(undefined, pin)));
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect(await store().get(tool)).toEqual(candidates[outcomes.indexOf(true)]);
    });

    it('refuses a malformed expected digest like a malformed pin, changing nothing', async () => {
      const tool = freshTool();
      const first = pinOf(tool);
      await store().pinFirst(first);
      const next = pinOf(tool, { description: 'next' });
      for (const expected of [first.digest.toUpperCase().replace('SHA256', 'sha256'), first.digest.slice(0, -1), ` ${first.digest}`, `${first.digest}\u0000`]) {
        await expect(store().replace(expected, next)).rejects.toThrow(/expectedDigest must be 'sha256:' followed by 64 lowercase hex digits/);
      }
      expect(await store().get(tool)).toEqual(first);
    });
  });

  describe('list', () => {
    it('lists every pin in byte order of the tool name, whatever the database’s locale', async () => {
      const prefix = freshTool('order');
      // Byte order: '-' < '.' < digits < upper case < '_' < lower case. A locale collation would
      // fold case and ignore punctuation, and put these elsewhere.
      const names = ['_a', '_B', '-c', '.d', 'Z', '_A', '9', 'a', 'b_', 'B'].map((suffix) => `${prefix}${suffix}`);
      for (const name of names) await store().pinFirst(pinOf(name));
      const mine = (await store().list()).map((p) => p.tool).filter((name) => name.startsWith(prefix));
      expect(mine).toEqual([...names].sort());
      expect(mine.map((name) => name.slice(prefix.length))).toEqual(['-c', '.d', '9', 'B', 'Z', '_A', '_B', '_a', 'a', 'b_']);
    });

    it('shows the replaced pin, not the one it replaced', async () => {
      const tool = freshTool();
      const first = pinOf(tool, { description: 'first' });
      await store().pinFirst(first);
      const second = pinOf(tool, { description: 'second', pinnedBy: 'alice' });
      await store().replace(first.digest, second);
      expect((await store().list()).filter((p) => p.tool === tool)).toEqual([second]);
    });
  });

  describe('values are kept verbatim', () => {
    it('keeps SQL-like, quoted and unicode text in a definition and in pinnedBy', async () => {
      // pinnedBy refuses invisible characters and line separators (tested below), so it takes the
      // SQL-like and quoted strings and visible unicode.
      const byValues = [...HOSTILE_STRINGS.slice(0, 3), 'émoji 🚀 RTL עברית 中文 e\u0301', '   spaced   '];
      for (const [i, text] of HOSTILE_STRINGS.entries()) {
        const tool = freshTool();
        const pinnedBy = byValues[i % byValues.length] as string;
        const pin = pinOf(tool, { description: `${text} \u0000 escaped NUL and \ud800 escaped lone surrogate`, pinnedBy });
        expect(await store().pinFirst(pin)).toEqual(pin);
        expect(await store().get(tool)).toEqual(pin);
      }
      expect(await store().list()).not.toHaveLength(0);
    });

    it('keeps a definition of exactly 256 KiB, and epoch milliseconds beyond 32 bits', async () => {
      const tool = freshTool();
      const empty = definitionOf(tool, '');
      // Two-byte characters, and one ASCII one if the rest is odd.
      const rest = MAX_DEFINITION_BYTES - Buffer.byteLength(empty);
      const definition = definitionOf(tool, `${'x'.repeat(rest % 2)}${'é'.repeat(Math.floor(rest / 2))}`);
      expect(Buffer.byteLength(definition)).toBe(MAX_DEFINITION_BYTES);
      const pin = pinOf(tool, { definition, digest: digestOf(definition), pinnedAt: Date.UTC(2099, 11, 31, 23, 59, 59, 999) });
      expect(await store().pinFirst(pin)).toEqual(pin);
      const read = await store().get(tool);
      expect(read).toEqual(pin);
      expect(typeof read?.pinnedAt).toBe('number');
    });

    it('keeps a tool name of 1 and of 128 characters', async () => {
      const long = pinOf(freshTool().padEnd(128, 'x'));
      expect(long.tool).toHaveLength(128);
      expect(await store().pinFirst(long)).toEqual(long);
      expect(await store().get(long.tool)).toEqual(long);
      // A one-character name cannot be fresh: on a shared database it may already hold a pin,
      // which pinFirst then keeps.
      const kept = await store().pinFirst(pinOf('x', { description: randomUUID() }));
      expect(kept.tool).toBe('x');
      expect(await store().get('x')).toEqual(kept);
    });
  });

  describe('malformed digests', () => {
    const hex = 'ab'.repeat(32);
    const spellings: ReadonlyArray<[string, unknown]> = [
      ['upper-case hex', `sha256:${hex.toUpperCase()}`],
      ['an upper-case prefix', `SHA256:${hex}`],
      ['a short digest', `sha256:${hex.slice(1)}`],
      ['a long digest', `sha256:${hex}0`],
      ['the prefix missing', hex],
      ['another algorithm', `sha512:${hex}`],
      ['a hyphenated prefix', `sha-256:${hex}`],
      ['leading whitespace', ` sha256:${hex}`],
      ['a trailing newline', `sha256:${hex}\n`],
      ['a trailing tab', `sha256:${hex}\t`],
      ['an embedded NUL', `sha256:${hex.slice(0, 32)}\u0000${hex.slice(33)}`],
      ['a zero-width space', `sha256:\u200b${hex.slice(1)}`],
      ['full-width digits', `sha256:${'\uff10'.repeat(64)}`],
      ['a non-hex letter', `sha256:${'g'.repeat(64)}`],
      ['the empty string', ''],
      ['a megabyte of hex', `sha256:${'a'.repeat(1 << 20)}`],
      ['a number', 42],
      ['null', null],
      ['nothing', undefined],
    ];
    it.each(spellings)('refuses %s, naming the field, storing nothing', async (_, digest) => {
      const pin = { ...pinOf(freshTool()), digest } as ToolPin;
      await expectRefused(pin, /pin\.digest must be 'sha256:' followed by 64 lowercase hex digits/, digest);
    });

    it('refuses a well-formed digest that is not the digest of the definition', async () => {
      const tool = freshTool();
      await expectRefused(pinOf(tool, { digest: digestOf(definitionOf(tool, 'another definition')) }), /pin\.digest is not the SHA-256 of pin\.definition/);
      await expectRefused(pinOf(tool, { digest: `sha256:${'0'.repeat(64)}` }), /pin\.digest is not the SHA-256/);
    });
  });

  describe('tool names out of bounds or with control characters', () => {
    const names: ReadonlyArray<[string, unknown]> = [
      ['the empty string', ''],
      ['129 characters', 'a'.repeat(129)],
      ['a megabyte', 'a'.repeat(1 << 20)],
      ['a NUL', 'files__read\u0000file'],
      ['a newline', 'files__read_file\n'],
      ['a carriage return', 'files__read\rfile'],
      ['a tab', 'files__read\tfile'],
      ['DEL', 'files__read\u007ffile'],
      ['a C1 control', 'files__read\u0085file'],
      ['a bidi override', 'files__read_\u202eelif'],
      ['a zero-width space', 'files__read\u200b_file'],
      ['a space', 'files__read file'],
      ['a Cyrillic look-alike', 'files__re\u0430d_file'],
      ['a lone surrogate', 'files__read\ud800file'],
      ['a path', '../../etc/passwd'],
      ['SQL', "x'; DROP TABLE tool_pins; --"],
      ['a number', 42],
      ['null', null],
    ];
    it.each(names)('refuses %s, naming the field, storing nothing', async (_, tool) => {
      const definition = definitionOf('files__read_file');
      const pin = { ...pinOf('files__read_file', { definition }), tool } as ToolPin;
      await expectRefused(pin, /pin\.tool must be 1 to 128 ASCII letters, digits, '_', '-' or '\.'/, tool);
    });

    it.each(names)('finds nothing under %s, without throwing', async (_, tool) => {
      expect(await store().get(tool as string)).toBeUndefined();
    });
  });

  describe('definitions over 256 KiB or not canonical JSON', () => {
    it('refuses one byte over 256 KiB, and 256 KiB of UTF-16 units that are more in UTF-8', async () => {
      const tool = freshTool();
      const empty = definitionOf(tool, '');
      const over = definitionOf(tool, 'x'.repeat(MAX_DEFINITION_BYTES - Buffer.byteLength(empty) + 1));
      expect(Buffer.byteLength(over)).toBe(MAX_DEFINITION_BYTES + 1);
      await expectRefused(withDefinition(tool, over), /pin\.definition must be at most 256 KiB of UTF-8/);
      const wide = definitionOf(tool, '中'.repeat(100 * KIB));
      expect(wide.length).toBeLessThan(MAX_DEFINITION_BYTES);
      await expectRefused(withDefinition(tool, wide), /pin\.definition must be at most 256 KiB/);
      await expectRefused(withDefinition(tool, definitionOf(tool, 'x'.repeat(8 << 20))), /pin\.definition must be at most 256 KiB/);
    });

    const canonical = '{"a":1,"b":"x"}';
    const texts: ReadonlyArray<[string, string]> = [
      ['a space after a colon', '{"a": 1,"b":"x"}'],
      ['pretty-printed JSON', JSON.stringify({ a: 1, b: 'x' }, null, 2)],
      ['a trailing newline', `${canonical}\n`],
      ['a byte-order mark', `\ufeff${canonical}`],
      ['unsorted keys', '{"b":"x","a":1}'],
      ['a duplicate key', '{"a":1,"a":1,"b":"x"}'],
      ['a redundant decimal', '{"a":1.0,"b":"x"}'],
      ['an exponent', '{"a":1e0,"b":"x"}'],
      ['negative zero', '{"a":-0,"b":"x"}'],
      ['an escaped letter', '{"a":1,"b":"\\u0078"}'],
      ['an escaped slash', '{"a":1,"b":"\\/"}'],
      ['an upper-case escape', '{"a":1,"b":"\\u001F"}'],
      ['a raw lone surrogate', '{"a":1,"b":"\ud800"}'],
      ['a raw NUL in a string', '{"a":1,"b":"\u0000"}'],
      ['a raw newline in a string', '{"a":1,"b":"line\nbreak"}'],
      ['JavaScript, not JSON', "{a:1,b:'x'}"],
      ['truncated JSON', '{"a":1,"b":"x"'],
      ['an array', '[1,2]'],
      ['a string', '"definition"'],
      ['null', 'null'],
      ['the empty string', ''],
    ];
    it.each(texts)('refuses %s, naming the field, storing nothing', async (_, text) => {
      await expectRefused(withDefinition(freshTool(), text), /pin\.definition (is not canonical JSON|is not JSON|must be a JSON object)/);
    });

    it('refuses a definition that is not a string', async () => {
      const tool = freshTool();
      for (const definition of [{ a: 1 }, 42, null, undefined]) {
        await expectRefused({ ...pinOf(tool), definition } as unknown as ToolPin, /pin\.definition must be a string of canonical JSON/);
      }
    });

    it('accepts 128 levels of nesting and refuses 129, and 40,000 or 100,000 levels (within 256 KiB) without overflowing', async () => {
      const tool = freshTool();
      await expectRefused(withDefinition(tool, nested(129)), /pin\.definition nests deeper than 128 levels/);
      await expectRefused(withDefinition(tool, `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), /pin\.definition nests deeper than 128 levels/);
      await expectRefused(withDefinition(tool, nested(40_000)), /pin\.definition nests deeper than 128 levels/);
      const deepest = withDefinition(tool, nested(128));
      expect(await store().pinFirst(deepest)).toEqual(deepest);
    });

    it('refuses 20 maximal hostile definitions in well under a second each', async () => {
      const tool = freshTool();
      // Each within 256 KiB, so each is parsed and walked: 80,000 objects, or 40,000 levels.
      const wide = `{"a":[${Array.from({ length: 80_000 }, () => '{}').join(',')}],"b":1 }`;
      const started = performance.now();
      for (let i = 0; i < 20; i++) await expectRefused(withDefinition(tool, i % 2 === 0 ? wide : nested(40_000)), /pin\.definition/);
      // Each is refused twice (pinFirst and replace): 40 checks, about 30 ms each on a loaded machine.
      expect(performance.now() - started).toBeLessThan(10_000);
    });
  });

  describe('pinnedBy, pinnedAt and provenance', () => {
    const byValues: ReadonlyArray<[string, unknown]> = [
      ['empty', ''],
      ['257 characters', 'a'.repeat(257)],
      ['a newline', 'alice\nbob'],
      ['a NUL', 'alice\u0000'],
      ['a bidi override', '\u202ealice'],
      ['a zero-width joiner', 'ali\u200dce'],
      ['a line separator', 'alice\u2028'],
      ['a lone surrogate', 'alice\udc00'],
      ['a number', 7],
      ['nothing', undefined],
    ];
    it.each(byValues)('refuses pinnedBy %s, naming the field', async (_, pinnedBy) => {
      await expectRefused({ ...pinOf(freshTool()), pinnedBy } as ToolPin, /pin\.pinnedBy must be 1 to 256 characters without control or invisible characters/, pinnedBy);
    });

    const atValues: ReadonlyArray<[string, unknown]> = [
      ['a fraction', T0 + 0.5],
      ['negative', -1],
      ['NaN', Number.NaN],
      ['infinite', Number.POSITIVE_INFINITY],
      ['beyond 2^53', 2 ** 53],
      ['a numeric string', String(T0)],
      ['a Date', new Date(T0)],
      ['nothing', undefined],
    ];
    it.each(atValues)('refuses pinnedAt %s, naming the field', async (_, pinnedAt) => {
      await expectRefused({ ...pinOf(freshTool()), pinnedAt } as ToolPin, /pin\.pinnedAt must be a non-negative integer/);
    });

    const provenances: ReadonlyArray<[string, unknown]> = [
      ['empty', ''],
      ['a bare prefix', 'mcp:'],
      ['an upper-case prefix', 'MCP:files'],
      ['an upper-case server', 'mcp:Files'],
      ['an unknown kind', 'third-party'],
      ['a trailing newline', 'mcp:files\n'],
      ['a server name of 65 characters', `mcp:${'a'.repeat(65)}`],
      ['a number', 1],
    ];
    it.each(provenances)('refuses provenance %s, naming the field', async (_, provenance) => {
      await expectRefused({ ...pinOf(freshTool()), provenance } as ToolPin, /pin\.provenance must be 'first-party' or 'mcp:<server>'/);
    });

    it('refuses a pin that is not an object', async () => {
      for (const pin of [null, 'pin', 42, ['files__read_file']]) {
        await expect(store().pinFirst(pin as unknown as ToolPin)).rejects.toThrow(/pin must be an object/);
        await expect(store().replace(undefined, pin as unknown as ToolPin)).rejects.toThrow(/pin must be an object/);
      }
    });

    it('leaves the pin in force as it was when a replacement is refused', async () => {
      const tool = freshTool();
      const first = pinOf(tool);
      await store().pinFirst(first);
      const bad = [
        { ...pinOf(tool, { description: 'changed' }), pinnedBy: '' },
        { ...pinOf(tool, { description: 'changed' }), digest: first.digest },
        withDefinition(tool, '{"description": "changed"}'),
      ];
      for (const pin of bad) await expect(store().replace(first.digest, pin)).rejects.toThrow(TypeError);
      expect(await store().get(tool)).toEqual(first);
    });
  });
}

/** A database two store instances can share. */
export interface SharedPinDatabase {
  /** Opens one more independent store (its own connection or pool) on the database. */
  open(): Promise<StoreUnderTest<ToolPinStore>>;
  /** Releases the database (e.g. deletes its file) after every instance was closed. */
  close?(): Promise<void>;
}

/**
 * What two store instances on one database must agree on: what separate server processes
 * sharing a SQLite file or a PostgreSQL database see. `database` is called once per test.
 */
export function testToolPinStoreAcrossInstances(database: () => Promise<SharedPinDatabase>): void {
  let shared: SharedPinDatabase | undefined;
  const instances: StoreUnderTest<ToolPinStore>[] = [];
  async function instance(): Promise<ToolPinStore> {
    shared ??= await database();
    const opened = await shared.open();
    instances.push(opened);
    return opened.store;
  }
  afterEach(async () => {
    for (const opened of instances.splice(0)) await opened.close?.();
    const closing = shared;
    shared = undefined;
    await closing?.close?.();
  });

  it('agree on one pin when callers on both pin one tool at once', async () => {
    const [a, b] = [await instance(), await instance()];
    for (let round = 0; round < 5; round++) {
      const tool = freshTool();
      const candidates = Array.from({ length: 20 }, (_, i) => pinOf(tool, { description: `round ${round} version ${i}`, pinnedAt: T0 + i }));
      const results = await Promise.all(candidates.map((pin, i) => (i % 2 === 0 ? a : b).pinFirst(pin)));
      const [fromA, fromB] = [await a.get(tool), await b.get(tool)];
      expect(fromA).toEqual(fromB);
      expect(candidates).toContainEqual(fromA);
      for (const result of results) expect(result).toEqual(fromA);
    }
  });

  it('let exactly one replacement from the same digest win across both', async () => {
    const [a, b] = [await instance(), await instance()];
    for (let round = 0; round < 5; round++) {
      const tool = freshTool();
      const first = pinOf(tool, { description: 'first' });
      await a.pinFirst(first);
      const candidates = Array.from({ length: 20 }, (_, i) => pinOf(tool, { description: `accepted ${i}`, pinnedBy: `operator-${i}` }));
      const outcomes = await Promise.all(candidates.map((pin, i) => (i % 2 === 0 ? a : b).replace(first.digest, pin)));
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const winner = candidates[outcomes.indexOf(true)];
      expect(await a.get(tool)).toEqual(winner);
      expect(await b.get(tool)).toEqual(winner);
    }
  });

  it('let exactly one first acceptance of an unpinned tool win across both', async () => {
    const [a, b] = [await instance(), await instance()];
    const tool = freshTool();
    const candidates = Array.from({ length: 20 }, (_, i) => pinOf(tool, { description: `accepted ${i}`, pinnedBy: `operator-${i}` }));
    const outcomes = await Promise.all(candidates.map((pin, i) => (i % 2 === 0 ? a : b).replace(undefined, pin)));
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(await b.get(tool)).toEqual(candidates[outcomes.indexOf(true)]);
  });

  it('see each other’s writes at once: a replacement made on one makes the other’s expected digest stale', async () => {
    const [a, b] = [await instance(), await instance()];
    const tool = freshTool();
    const first = pinOf(tool, { description: 'first' });
    expect(await a.pinFirst(first)).toEqual(first);
    expect(await b.pinFirst(pinOf(tool, { description: 'b saw another' }))).toEqual(first);
    const second = pinOf(tool, { description: 'second', pinnedBy: 'alice' });
    expect(await b.replace(first.digest, second)).toBe(true);
    expect(await a.replace(first.digest, pinOf(tool, { description: 'third', pinnedBy: 'bob' }))).toBe(false);
    expect(await a.get(tool)).toEqual(second);
  });

  it('keep every pin when the instance that wrote it closes and another opens', async () => {
    const writer = await instance();
    const prefix = freshTool('reopen');
    const pins = ['b', 'a', 'c'].map((suffix) => pinOf(`${prefix}_${suffix}`, { pinnedBy: `operator-${suffix}`, pinnedAt: T0 + 2 ** 40 }));
    for (const pin of pins) await writer.pinFirst(pin);
    const replaced = pinOf(pins[0]!.tool, { description: 'accepted change', pinnedBy: 'alice' });
    expect(await writer.replace(pins[0]!.digest, replaced)).toBe(true);
    await instances.pop()?.close?.();

    const reopened = await instance();
    expect((await reopened.list()).filter((p) => p.tool.startsWith(prefix))).toEqual([pins[1], replaced, pins[2]]);
    // The reopened store still refuses a stale acceptance: the check-and-set is in the data.
    expect(await reopened.replace(pins[0]!.digest, pinOf(pins[0]!.tool, { description: 'stale' }))).toBe(false);
    expect(await reopened.pinFirst(pinOf(pins[1]!.tool, { description: 'changed after restart' }))).toEqual(pins[1]);
  });
}
