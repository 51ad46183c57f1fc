import { describe, expect, it } from 'vitest';
import { SCRIPT_FILE, extractImportSpecifiers } from './import-scanner.js';

describe('extractImportSpecifiers', () => {
  it('finds every form of import, type-only ones included', () => {
    const source = [
      "import type { AppRouter } from '@toolgate/server';",
      "import { type Principal, token } from '@toolgate/contracts';",
      "import './side-effect.js';",
      "export * from './audit-sink.port.js';",
      "export { Ajv } from 'ajv';",
      "type Client = import('@trpc/client').TRPCClient<AppRouter>;",
      "const pg = await import('pg');",
      "const { Container } = require('inversify');",
    ].join('\n');
    expect(extractImportSpecifiers(source)).toEqual([
      '@toolgate/server',
      '@toolgate/contracts',
      './side-effect.js',
      './audit-sink.port.js',
      'ajv',
      '@trpc/client',
      'pg',
      'inversify',
    ]);
  });

  it('ignores specifiers in comments and strings, and lists each once', () => {
    const source = [
      "// import { Container } from 'inversify';",
      "/* import x from 'forbidden'; */",
      "const text = \"import y from 'not-an-import'\";",
      "import { a } from './a.js';",
      "import { b } from './a.js';",
    ].join('\n');
    expect(extractImportSpecifiers(source)).toEqual(['./a.js']);
  });
});

describe('SCRIPT_FILE', () => {
  it('matches the script files a project can hold and nothing else', () => {
    for (const file of ['a.ts', 'a.mts', 'a.cts', 'a.tsx', 'a.js', 'a.mjs', 'a.cjs', 'a.jsx']) expect(file).toMatch(SCRIPT_FILE);
    for (const file of ['package.json', 'a.ts.template', 'README.md', 'a.tsbuildinfo']) expect(file).not.toMatch(SCRIPT_FILE);
  });
});
