/** Longest failure message passed on to a caller. */
const MAX_MESSAGE_LENGTH = 1000;
/**
 * How much of a message is looked at. The answer is at most 1000 characters, and a tool (an MCP
 * server, a process's stderr) chooses the message: scanning megabytes of it would hold the loop.
 */
const MAX_SCANNED_LENGTH = 16 * 1024;
/** Paths checked against the arguments; any further path becomes `[path]` unchecked. */
const MAX_CHECKED_PATHS = 256;

// An absolute POSIX path: a slash not preceded by anything that makes it part of a word or a
// relative path (or follows the `<workspace>` placeholder), not the `//` of a URL, followed by at
// least one path character. `file:` URLs and Windows
// drive paths are matched separately.
const POSIX_PATH = /(?<![\w.~/\\>-])\/(?!\/)[^\s'"`<>()[\]{},;|]+/g;
const FILE_URL = /\bfile:\/\/[^\s'"`<>()]*/gi;
const WINDOWS_PATH = /\b[A-Za-z]:\\[^\s'"`<>()]*/g;
// Horizontal space only: `\s*` would run across blank lines from every line start (quadratic).
const STACK_LINE = /^[ \t]*at[ \t].*$/gm;

/**
 * The last line of defence on a `ToolError` message before it reaches the caller: the tenant's
 * workspace root becomes `<workspace>`, stack frames are cut, and absolute host paths become
 * `[path]`, except paths the caller itself sent in the arguments (echoing those leaks nothing,
 * and a message like "'/etc/passwd' is outside the workspace" stays useful).
 */
export function sanitizeToolMessage(message: string, context: { readonly workspaceRoot: string; readonly argsJson: string }): string {
  let text = String(message).slice(0, MAX_SCANNED_LENGTH);
  if (context.workspaceRoot.length > 1) text = text.split(context.workspaceRoot).join('<workspace>');
  text = text.replace(STACK_LINE, '').replace(FILE_URL, '[path]').replace(WINDOWS_PATH, '[path]');
  let checked = 0;
  text = text.replace(POSIX_PATH, (path) => (checked++ < MAX_CHECKED_PATHS && context.argsJson.includes(path) ? path : '[path]'));
  text = text.replace(/\n{2,}/g, '\n').trim();
  if (text === '') return 'the tool failed';
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : text;
}
