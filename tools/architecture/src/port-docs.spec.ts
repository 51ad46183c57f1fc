import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { workspaceRoot } from '@nx/devkit';
import { describe, expect, it } from 'vitest';
import { undocumentedDeclarations } from './port-docs.js';

const CONTRACTS = path.join(workspaceRoot, 'libs/contracts/src');
/** The tool-handler contract is a port in all but name (ToolHandler, ToolContext, ToolDefinition). */
const ALSO_CHECKED = ['tool-handler.ts'];
const portFiles = [...readdirSync(CONTRACTS).filter((name) => name.endsWith('.port.ts')), ...ALSO_CHECKED].sort();

const names = (source: string) => undocumentedDeclarations(source).map((d) => d.name);

describe('every port is documented', () => {
  it('finds the port files (a renamed folder must not turn this into a check of nothing)', () => {
    expect(portFiles).toEqual(expect.arrayContaining(['audit-sink.port.ts', 'tool-executor.port.ts', 'search-provider.port.ts', 'tool-handler.ts']));
    expect(portFiles.length).toBeGreaterThanOrEqual(12);
  });

  it.each(portFiles)('%s: every exported interface member, class, type and token has TSDoc', (file) => {
    const missing = undocumentedDeclarations(readFileSync(path.join(CONTRACTS, file), 'utf8'), file);
    expect(missing.map((d) => `${file}:${d.line} ${d.name}`)).toEqual([]);
  });
});

describe('the TSDoc check', () => {
  it('reports an undocumented token, interface, member and class', () => {
    const source = `
      import { token, type Token } from './token.js';
      export interface Sink { append(): Promise<void>; readonly size: number }
      export const SinkToken: Token<Sink> = token('Sink');
      export class SinkError extends Error {}
      export type Kind = 'a' | 'b';
      export function open(): void {}
    `;
    expect(names(source)).toEqual(['Sink', 'Sink.append', 'Sink.size', 'SinkToken', 'SinkError', 'Kind', 'open']);
  });

  it('accepts the same declarations once each carries TSDoc', () => {
    const source = `
      /** Where records go. */
      export interface Sink {
        /** Writes one record. */
        append(): Promise<void>;
        /** Records written so far. */
        readonly size: number;
      }
      /** The sink's token. */
      export const SinkToken = token('Sink');
      /** The sink is gone. */
      export class SinkError extends Error {
        override readonly name = 'SinkError';
        constructor(
          message: string,
          /** Which setting. */
          readonly setting: string,
          private readonly hidden: number,
        ) {
          super(message);
        }
        /** Why, in short. */
        get reason(): string { return this.message; }
        #secret = 1;
      }
    `;
    expect(names(source)).toEqual([]);
  });

  it('does not count a line comment, an empty doc block, or a block comment that is not TSDoc', () => {
    const source = `
      /** Where records go. */
      export interface Sink {
        // Writes one record.
        append(): Promise<void>;
        /** */
        readonly size: number;
        /* Not TSDoc. */
        close(): void;
      }
    `;
    expect(names(source)).toEqual(['Sink.append', 'Sink.size', 'Sink.close']);
  });

  it("does not let one member's comment cover the next", () => {
    const source = `
      /** Where records go. */
      export interface Sink {
        /** Writes one record. */
        append(): Promise<void>; verify(): Promise<void>;
      }
    `;
    expect(names(source)).toEqual(['Sink.verify']);
  });

  it('checks members of nested object types, public parameter properties, getters and exported object constants', () => {
    const source = `
      /** A report. */
      export interface Report {
        /** The first fault. */
        readonly fault?: {
          readonly reason: string;
          /** Where. */
          readonly seq?: number;
        };
      }
      /** An error. */
      export class ConfigError extends Error {
        constructor(message: string, readonly setting: string) { super(message); }
        get missing(): boolean { return false; }
      }
      /** Reasons. */
      export const REASONS = {
        /** Retry later. */
        busy: 'BUSY',
        gone: 'GONE',
      } as const;
    `;
    expect(names(source)).toEqual(['Report.fault.reason', 'ConfigError.setting', 'ConfigError.missing', 'REASONS.gone']);
  });

  it('reports a syntax error, which could otherwise hide a member (an unclosed doc comment swallows the next line)', () => {
    const source = `
      /** A message. */
      export interface Message {
        /** Epoch milliseconds.
        readonly publishedAt: number;
      }
    `;
    expect(names(source)).toEqual([expect.stringMatching(/^syntax error: /)]);
  });

  it('ignores what is not exported: a port file may keep private helpers', () => {
    expect(names(`interface Internal { x: number }\nconst helper = 1;`)).toEqual([]);
  });

  it('names the line of each finding', () => {
    const found = undocumentedDeclarations(`/** A. */\nexport interface A {\n  x: number;\n}\n`);
    expect(found).toEqual([{ name: 'A.x', line: 3 }]);
  });
});
