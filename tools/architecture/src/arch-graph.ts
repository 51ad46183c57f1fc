/**
 * The workspace as the architecture check sees it: projects with their tags, and every edge
 * that leaves a project, attributed to the file that holds it. Structural on purpose, so a test
 * can write a forbidden workspace as a literal and the checker never needs Nx.
 */
export interface ArchGraph {
  readonly projects: readonly ArchProject[];
  /** Edges between projects of the workspace. */
  readonly dependencies: readonly ArchDependency[];
  /** Imports of anything that is not a project: npm packages, node builtins, loose files. */
  readonly externalImports: readonly ArchExternalImport[];
}

/** One Nx project. `name` is also its npm package name in this workspace. */
export interface ArchProject {
  readonly name: string;
  /** Workspace-relative directory, e.g. `libs/adapters/audit-file`. */
  readonly root: string;
  readonly tags: readonly string[];
}

/** `source` depends on `target`. */
export interface ArchDependency {
  readonly source: string;
  readonly target: string;
  /**
   * Workspace-relative file that holds the dependency. Absent for a project-level edge no file
   * explains (an Nx implicit dependency): such an edge is judged as a source-file edge.
   */
  readonly file?: string;
  /** The import specifier as written, e.g. `@toolgate/gateway` or `../../gateway/src/x.js`. */
  readonly specifier?: string;
}

/** A project's file imports something that is not a workspace project. */
export interface ArchExternalImport {
  readonly project: string;
  /** Workspace-relative file; absent when only the Nx graph knows of the edge. */
  readonly file?: string;
  /**
   * The specifier as written: an npm package (`ajv`, `vitest/config`), a node builtin
   * (`node:fs`, `fs`), or a relative path that leaves the project without landing in another.
   */
  readonly module: string;
}

/** One broken rule, with a message that names the project, the file and the import. */
export interface Violation {
  readonly rule: RuleId;
  readonly project: string;
  readonly file?: string;
  /** The project or module depended upon, when the rule is about an edge. */
  readonly target?: string;
  readonly message: string;
}

export type RuleId =
  /** A project has no `scope:*` tag, several, or one the rule table does not know. */
  | 'scope-tag'
  /** An edge points from or to a project the graph does not list. */
  | 'unknown-project'
  /** An edge against the direction of the dependency rule. */
  | 'dependency-direction'
  /** An app depends on another app (type-only imports included). */
  | 'app-to-app'
  /** A project depends on workspace tooling. */
  | 'tooling-dependency'
  /** Another lib is reached by relative path or by a path inside its package. */
  | 'deep-import'
  /** `libs/contracts` imports something outside itself. */
  | 'contracts-external'
  /** A relative import leaves its project without landing in another project. */
  | 'relative-escape'
  /** inversify is imported outside the composition root. */
  | 'inversify-outside-composition-root';
