import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Tree } from '@nx/devkit';
import type { ToolDefinition } from '@toolgate/contracts';
import { ToolRegistry } from '@toolgate/gateway';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

interface ToolNames {
  name: string;
  fileName: string;
  propertyName: string;
  toolName: string;
  packageName: string;
  projectRoot: string;
}

// The generator is CommonJS (Nx require()s it); load it the way Nx does, and the devkit through
// the same require cache so the logger spy sees its calls.
const require = createRequire(import.meta.url);
const { toolGenerator, toolNames } = require('./generator.cjs') as {
  toolGenerator: (tree: Tree, options: { name: unknown }) => Promise<void>;
  toolNames: (name: unknown) => ToolNames;
};
const devkit = require('@nx/devkit') as typeof import('@nx/devkit');
const run = promisify(execFile);
const nxBin = require.resolve('nx/bin/nx.js');

const workspaceRoot = fileURLToPath(new URL('../../../../../', import.meta.url));
const root = 'libs/tools/demo-echo';

async function generate(name: string): Promise<Tree> {
  const tree = createTreeWithEmptyWorkspace();
  await toolGenerator(tree, { name });
  return tree;
}

function read(tree: Tree, file: string): string {
  const text = tree.read(`${root}/${file}`, 'utf-8');
  if (text === null) throw new Error(`${file} was not generated`);
  return text;
}

describe('tool generator', () => {
  it('scaffolds exactly the lib of a tool under libs/tools/<name>', async () => {
    const tree = await generate('demo-echo');
    const files = tree.listChanges().map((c) => c.path).filter((p) => p.startsWith(`${root}/`)).sort();
    expect(files).toEqual([
      `${root}/package.json`,
      `${root}/src/demo-echo.tool.spec.ts`,
      `${root}/src/demo-echo.tool.ts`,
      `${root}/src/index.ts`,
      `${root}/vitest.config.ts`,
    ]);
    for (const file of files) {
      const text = tree.read(file, 'utf-8') ?? '';
      expect(text, file).not.toMatch(/<%|%>|__\w+__/);
    }
  });

  it('writes a workspace package tagged scope:tool', async () => {
    const manifest = JSON.parse(read(await generate('demo-echo'), 'package.json')) as Record<string, unknown>;
    expect(manifest).toEqual({
      name: '@toolgate/tool-demo-echo',
      version: '0.1.0',
      private: true,
      type: 'module',
      exports: { '.': './src/index.ts' },
      nx: { tags: ['scope:tool'] },
    });
  });

  it('writes the one-line vitest config, pointing at the shared root config', async () => {
    const config = read(await generate('demo-echo'), 'vitest.config.ts');
    expect(config).toBe("import { toolgateProject } from '../../../vitest.shared.ts';\n\nexport default toolgateProject('tool-demo-echo');\n");
    expect(path.posix.join(root, '../../../vitest.shared.ts')).toBe('vitest.shared.ts');
  });

  it('names the manifest in snake_case and the exports in camelCase', async () => {
    const tree = await generate('demo-echo');
    const tool = read(tree, 'src/demo-echo.tool.ts');
    expect(tool).toContain("name: 'demo_echo'");
    expect(tool).toContain('export const demoEchoManifest: ToolManifest = {');
    expect(tool).toContain('export const demoEchoTool: ToolDefinition = { manifest: demoEchoManifest, handler: demoEchoHandler };');
    expect(tool).toMatch(/additionalProperties: false/);
    expect(tool).toMatch(/risk: 'low',\s+permissions: \[\],/);
    expect(tool).toContain("tier: 'inprocess'");
    expect(read(tree, 'src/index.ts')).toBe("export { demoEchoTool, demoEchoManifest, MAX_TEXT_LENGTH } from './demo-echo.tool.js';\n");
    // The tool imports nothing but contracts: the dependency rule for scope:tool.
    expect([...tool.matchAll(/from '([^']+)'/g)].map((m) => m[1])).toEqual(['@toolgate/contracts']);
  });

  it('derives every name from the kebab-case one', () => {
    expect(toolNames('web-page-summary')).toEqual({
      name: 'web-page-summary',
      fileName: 'web-page-summary',
      propertyName: 'webPageSummary',
      toolName: 'web_page_summary',
      packageName: '@toolgate/tool-web-page-summary',
      projectRoot: 'libs/tools/web-page-summary',
    });
    expect(toolNames('geo2')).toMatchObject({ propertyName: 'geo2', toolName: 'geo2' });
  });

  it.each(['Demo', '1tool', 'demo_echo', 'demo--echo', 'demo-', '-demo', '', 'demo echo', 'a'.repeat(65), undefined])(
    'refuses the name %j with a message saying what a name looks like',
    async (name) => {
      const tree = createTreeWithEmptyWorkspace();
      const before = tree.listChanges().length;
      await expect(toolGenerator(tree, { name })).rejects.toThrow(/is not a valid tool name: use kebab-case/);
      expect(tree.listChanges()).toHaveLength(before);
    },
  );

  it('refuses to overwrite an existing lib', async () => {
    const tree = createTreeWithEmptyWorkspace();
    tree.write(`${root}/src/keep.ts`, 'export const keep = 1;\n');
    await expect(toolGenerator(tree, { name: 'demo-echo' })).rejects.toThrow(`${root} already exists`);
    expect(tree.read(`${root}/src/keep.ts`, 'utf-8')).toBe('export const keep = 1;\n');
    expect(tree.exists(`${root}/package.json`)).toBe(false);
  });

  it('prints the third step: npm install and registering in the composition root', async () => {
    const info = vi.spyOn(devkit.logger, 'info').mockImplementation(() => undefined);
    try {
      await generate('demo-echo');
      const printed = info.mock.calls.map((c) => String(c[0])).join('\n');
      expect(printed).toContain('npm install');
      expect(printed).toContain('apps/server/src/tools.ts');
      expect(printed).toContain("import { demoEchoTool } from '@toolgate/tool-demo-echo';");
      expect(printed).toContain('add demoEchoTool to FIRST_PARTY_TOOLS');
      expect(printed).toContain('withNeeds({ needs: { bus: MessageBusToken }, create: ({ bus }) => createDemoEchoTool({ bus }) })');
    } finally {
      info.mockRestore();
    }
  });

  it('names only what the composition root really has: the list, the helper and the token it prints', async () => {
    const toolList = await readFile(path.join(workspaceRoot, 'apps/server/src/tools.ts'), 'utf8');
    expect(toolList).toMatch(/^export const FIRST_PARTY_TOOLS\b/m);
    expect(toolList).toMatch(/^import \{[^}]*\bwithNeeds\b[^}]*\} from '\.\/bindings\/tool-entries\.js';$/m);
    expect(toolList).toMatch(/^import \{[^}]*\bMessageBusToken\b[^}]*\} from '@toolgate\/contracts';$/m);
    // The list already has an entry of the printed form: needs named by token, create taking them by name.
    expect(toolList).toMatch(/withNeeds\(\{\s*needs: \{ bus: MessageBusToken\b[^}]*\},\s*create: \(\{ bus\b/);
  });
});

describe('the generated lib', () => {
  // Written outside the checkout so a concurrent typecheck, lint or Nx graph never sees it;
  // node_modules is linked so `@toolgate/contracts`, ajv and vitest resolve as in the repo.
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'toolgate-gen-'));
    const tree = await generate('demo-echo');
    for (const change of tree.listChanges()) {
      if (change.type === 'DELETE' || !change.content) continue;
      await mkdir(path.dirname(path.join(dir, change.path)), { recursive: true });
      await writeFile(path.join(dir, change.path), change.content);
    }
    await symlink(path.join(workspaceRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    await copyFile(path.join(workspaceRoot, 'vitest.shared.ts'), path.join(dir, 'vitest.shared.ts'));
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: path.join(workspaceRoot, 'tsconfig.base.json'), include: [`${root}/**/*.ts`, 'vitest.shared.ts'] }),
    );
  }, 60_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('typechecks with the repo compiler options', async () => {
    const tsc = path.join(workspaceRoot, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { timeout: 120_000 }).catch((e: { stdout: string }) => e);
    expect(result.stdout).toBe('');
  }, 120_000);

  it('is accepted by the gateway registry, which checks every manifest at start', async () => {
    const generated = (await import(pathToFileURL(path.join(dir, root, 'src/index.ts')).href)) as { demoEchoTool: ToolDefinition };
    const registry = new ToolRegistry([generated.demoEchoTool]);
    expect(registry.get('demo_echo')?.manifest.version).toBe('0.1.0');
  });

  it('passes its own test', async () => {
    const vitest = path.join(workspaceRoot, 'node_modules/vitest/vitest.mjs');
    const { stdout } = await run(process.execPath, [vitest, 'run', '--root', path.join(dir, root)], {
      timeout: 120_000,
      env: { ...process.env, CI: 'true', NO_COLOR: '1' },
    });
    expect(stdout).toMatch(/Tests\s+6 passed \(6\)/);
  }, 120_000);
});

describe('the Nx CLI', () => {
  it('runs `nx g @toolgate/workspace:tool` from generators.json (dry run)', async () => {
    const { stdout } = await run(process.execPath, [nxBin, 'g', '@toolgate/workspace:tool', 'demo-echo', '--dry-run', '--no-interactive'], {
      cwd: workspaceRoot,
      timeout: 120_000,
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NO_COLOR: '1' },
    });
    expect(stdout).toContain(`CREATE ${root}/src/demo-echo.tool.ts`);
    expect(stdout).toContain(`CREATE ${root}/package.json`);
    expect(stdout).toContain('apps/server/src/tools.ts');
  }, 120_000);

  it('registers the generator and a schema that agrees with it', () => {
    const packageDir = fileURLToPath(new URL('../../../', import.meta.url));
    const collection = require(path.join(packageDir, 'generators.json')) as {
      generators: Record<string, { factory: string; schema: string }>;
    };
    const entry = collection.generators['tool']!;
    expect(require(path.join(packageDir, entry.factory))).toBe(toolGenerator);
    const schema = require(path.join(packageDir, entry.schema)) as { properties: { name: { pattern: string } }; required: string[] };
    expect(schema.required).toEqual(['name']);
    expect(schema.properties.name.pattern).toBe('^[a-z][a-z0-9-]*$');
    // Nx applies the schema before the generator runs; every name the generator accepts must pass it.
    const pattern = new RegExp(schema.properties.name.pattern);
    for (const name of ['demo-echo', 'geo2', 'web-page-summary']) expect(pattern.test(name) && toolNames(name).name === name).toBe(true);
    expect(pattern.test('Bad_Name')).toBe(false);
  });
});
