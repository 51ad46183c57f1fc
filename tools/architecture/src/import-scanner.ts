import ts from 'typescript';

/** Files whose imports the architecture check reads. */
export const SCRIPT_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/**
 * Every module specifier a source file names: static and type-only imports, re-exports,
 * `import()` with a literal (also in type positions) and `require()`. Uses the TypeScript
 * pre-processor, so specifiers inside comments and strings are not mistaken for imports.
 */
export function extractImportSpecifiers(sourceText: string): string[] {
  const info = ts.preProcessFile(sourceText, true, true);
  const specifiers = info.importedFiles.map((ref) => ref.fileName);
  return [...new Set(specifiers)];
}
