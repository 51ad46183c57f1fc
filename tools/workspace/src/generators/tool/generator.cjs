'use strict';
// CommonJS and plain JavaScript on purpose: Nx loads a local generator with require(), and
// this way it needs no build step and no TypeScript loader. The shared ESLint config lints
// .cjs files as CommonJS (eslint.config.mjs).

const path = require('node:path');
const { generateFiles, logger, names } = require('@nx/devkit');

/** Kebab-case with no leading digit, no empty segment and no trailing hyphen. */
const TOOL_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
/** The gateway refuses first-party manifest names longer than this. */
const MAX_NAME_LENGTH = 64;
const TEMPLATES = path.join(__dirname, '..', '..', '..', 'files', 'tool');

/**
 * @typedef {object} ToolNames
 * @property {string} name          kebab-case lib name, e.g. `demo-echo`
 * @property {string} fileName      file stem, e.g. `demo-echo` (→ `demo-echo.tool.ts`)
 * @property {string} propertyName  camelCase stem of the exports, e.g. `demoEcho` (→ `demoEchoTool`)
 * @property {string} toolName      snake_case manifest name, e.g. `demo_echo`
 * @property {string} packageName   npm workspace package, e.g. `@toolgate/tool-demo-echo`
 * @property {string} projectRoot   workspace-relative directory, e.g. `libs/tools/demo-echo`
 */

/**
 * Every name the templates need, derived from the kebab-case tool name. Throws a message that
 * says what a valid name looks like, because a direct caller bypasses the schema's pattern.
 * @param {unknown} name
 * @returns {ToolNames}
 */
function toolNames(name) {
  if (typeof name !== 'string' || !TOOL_NAME.test(name) || name.length > MAX_NAME_LENGTH) {
    throw new Error(
      `'${String(name)}' is not a valid tool name: use kebab-case (a-z, 0-9 and single hyphens, starting with a letter), at most ${MAX_NAME_LENGTH} characters, e.g. 'demo-echo'`,
    );
  }
  const n = names(name);
  return {
    name,
    fileName: n.fileName,
    propertyName: n.propertyName,
    toolName: name.replace(/-/g, '_'),
    packageName: `@toolgate/tool-${name}`,
    projectRoot: `libs/tools/${name}`,
  };
}

/**
 * The third step of adding a tool, which the generator leaves to the developer: the composition
 * root decides which tools a server offers, so registering is a deliberate, reviewed edit.
 * @param {ToolNames} t
 * @returns {string}
 */
function nextSteps(t) {
  // The name a factory of this tool would have, e.g. `createDemoEchoTool`.
  const factory = `create${names(t.name).className}Tool`;
  return [
    `Scaffolded ${t.packageName} in ${t.projectRoot} (manifest '${t.toolName}', handler and a passing test).`,
    'Next:',
    `  1. Run \`npm install\` so the workspace link node_modules/${t.packageName} exists.`,
    `  2. Replace the echo in ${t.projectRoot}/src/${t.fileName}.tool.ts with the real work, and declare`,
    '     its permissions, egress, risk and tier in the manifest. The gateway enforces exactly what is declared.',
    `  3. Register it in apps/server/src/tools.ts (the composition root's tool list):`,
    `       import { ${t.propertyName}Tool } from '${t.packageName}';`,
    `     and add ${t.propertyName}Tool to FIRST_PARTY_TOOLS. A tool made from ports (a factory such as`,
    `     ${factory}({ bus })) goes in as an entry that names each port by its token:`,
    `       withNeeds({ needs: { bus: MessageBusToken }, create: ({ bus }) => ${factory}({ bus }) })`,
    '     The container resolves the tokens; the types check every name.',
    `  Test it: cd ${t.projectRoot} && npx vitest run`,
  ].join('\n');
}

/**
 * `nx g @toolgate/workspace:tool <name>`: scaffolds steps 1–2 of adding a tool (a handler in a
 * lib that depends only on `@toolgate/contracts`, and its manifest) as `libs/tools/<name>`.
 * @param {import('@nx/devkit').Tree} tree
 * @param {{ name: string }} options
 */
async function toolGenerator(tree, options) {
  const t = toolNames(options && options.name);
  if (tree.exists(t.projectRoot)) {
    throw new Error(`${t.projectRoot} already exists; choose another name or edit that lib`);
  }
  generateFiles(tree, TEMPLATES, t.projectRoot, { ...t });
  logger.info(nextSteps(t));
}

module.exports = toolGenerator;
module.exports.default = toolGenerator;
module.exports.toolGenerator = toolGenerator;
module.exports.toolNames = toolNames;
module.exports.nextSteps = nextSteps;
