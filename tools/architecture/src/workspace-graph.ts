import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  createProjectFileMapUsingProjectGraph,
  createProjectGraphAsync,
  workspaceRoot as nxWorkspaceRoot,
  type ProjectGraph,
} from '@nx/devkit';
import type { ArchDependency, ArchExternalImport, ArchGraph, ArchProject } from './arch-graph.js';
import { SCRIPT_FILE, extractImportSpecifiers } from './import-scanner.js';
import { isBuiltinModule, isRelativeSpecifier, packageNameOf } from './rules.js';

/**
 * Builds the `ArchGraph` of the real workspace from the Nx project graph.
 *
 * Nx decides what the projects are, their roots, tags and files. The file-level edges come from
 * reading every script file of every project, because the public Nx file map lists files but
 * not which file holds a dependency, and Nx records neither node builtins nor relative paths
 * that leave a project. Every project edge Nx knows that no file explains (an implicit
 * dependency, a `package.json` dependency) is added as well, so the check never sees less than
 * Nx does.
 */
export async function readWorkspaceGraph(): Promise<ArchGraph> {
  // The daemon would serve a graph computed by another process; the test wants this checkout now.
  process.env['NX_DAEMON'] = 'false';
  const graph = await createProjectGraphAsync({ exitOnError: false });
  const fileMap = await createProjectFileMapUsingProjectGraph(graph);
  return buildArchGraph(graph, fileMap, nxWorkspaceRoot);
}

/**
 * Builds the `ArchGraph` from an Nx project graph, its project file map and the workspace
 * directory the files are read from. Exported for tests that hand it a small graph.
 */
export async function buildArchGraph(
  graph: ProjectGraph,
  fileMap: Readonly<Record<string, readonly { readonly file: string }[]>>,
  root: string,
): Promise<ArchGraph> {
  const projects: ArchProject[] = Object.values(graph.nodes)
    .map((node) => ({ name: node.name, root: node.data.root, tags: [...(node.data.tags ?? [])] }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const byPackage = new Map<string, string>();
  for (const node of Object.values(graph.nodes)) {
    byPackage.set(node.name, node.name);
    const packageName = (node.data.metadata as { js?: { packageName?: string } } | undefined)?.js?.packageName;
    if (packageName) byPackage.set(packageName, node.name);
  }
  // Longest root first, so a project nested in another's directory owns its own files.
  const roots = [...projects].sort((a, b) => b.root.length - a.root.length);
  const projectOf = (file: string) => roots.find((p) => p.root === '.' || file === p.root || file.startsWith(`${p.root}/`));

  const dependencies: ArchDependency[] = [];
  const externalImports: ArchExternalImport[] = [];
  for (const project of projects) {
    for (const { file } of fileMap[project.name] ?? []) {
      if (!SCRIPT_FILE.test(file) || file.endsWith('.d.ts')) continue;
      const text = await readFile(path.join(root, file), 'utf8');
      for (const specifier of extractImportSpecifiers(text)) {
        if (isRelativeSpecifier(specifier)) {
          const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
          const owner = projectOf(resolved);
          if (owner?.name === project.name) continue;
          if (owner) dependencies.push({ source: project.name, target: owner.name, file, specifier });
          else externalImports.push({ project: project.name, file, module: specifier });
        } else if (isBuiltinModule(specifier)) {
          externalImports.push({ project: project.name, file, module: specifier });
        } else {
          const target = byPackage.get(packageNameOf(specifier));
          if (target) dependencies.push({ source: project.name, target, file, specifier });
          else externalImports.push({ project: project.name, file, module: specifier });
        }
      }
    }
  }

  for (const [source, edges] of Object.entries(graph.dependencies)) {
    if (!graph.nodes[source]) continue;
    const manifest = await readManifestDependencies(root, graph.nodes[source].data.root);
    for (const edge of edges) {
      if (edge.target.startsWith('npm:')) {
        const module = edge.target.slice('npm:'.length).replace(/@[^@/]+$/, '');
        const explained = externalImports.some((i) => i.project === source && packageNameOf(i.module) === module);
        if (!explained) externalImports.push({ project: source, ...manifestFile(manifest, module), module });
      } else if (graph.nodes[edge.target]) {
        const explained = dependencies.some((d) => d.source === source && d.target === edge.target);
        if (!explained) dependencies.push({ source, target: edge.target, ...manifestFile(manifest, edge.target) });
      }
    }
  }
  return { projects, dependencies, externalImports };
}

interface ManifestDependencies {
  readonly file: string;
  readonly names: ReadonlySet<string>;
}

/** The packages a project's `package.json` lists, so an edge from there is attributed to it. */
async function readManifestDependencies(root: string, projectRoot: string): Promise<ManifestDependencies | undefined> {
  const file = path.posix.join(projectRoot, 'package.json');
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(await readFile(path.join(root, file), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const names = new Set<string>();
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    const listed = manifest[field];
    if (listed && typeof listed === 'object') for (const name of Object.keys(listed)) names.add(name);
  }
  return { file, names };
}

function manifestFile(manifest: ManifestDependencies | undefined, name: string): { file?: string } {
  return manifest?.names.has(name) ? { file: manifest.file } : {};
}
