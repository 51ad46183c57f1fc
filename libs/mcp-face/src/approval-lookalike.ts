/** How many times a path is percent-decoded at most: enough for any double or triple encoding. */
const MAX_DECODES = 4;

function decodedPath(pathname: string): string {
  let path = pathname;
  for (let i = 0; i < MAX_DECODES; i++) {
    let next: string;
    try {
      next = decodeURIComponent(path);
    } catch {
      // A stray '%' is left as it is; what decoded so far is what is checked.
      break;
    }
    if (next === path) break;
    path = next;
  }
  return path;
}

/** The host as compared: lower case, without a trailing dot (`Toolgate.Example.` is `toolgate.example`). */
function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/\.+$/, '');
}

/**
 * Why an upstream's URL elicitation must not reach the caller, or undefined. Toolgate's own
 * approval requests are URL elicitations pointing at its approval page, where approvers type their
 * token; an upstream MCP server asking for a URL on that page's host, or on any host under a path
 * segment `approvals` (however it is encoded or cased), could pass for one and lead an approver to
 * a lookalike page. A URL that cannot be read is refused too: what it points at cannot be checked.
 *
 * @param approvalUrl the face's approval page URL for an id (absolute, or server-relative by default).
 */
export function approvalLookalikeProblem(url: unknown, approvalUrl: (approvalId: string) => string): string | undefined {
  if (typeof url !== 'string') return 'a URL elicitation needs a url';
  let asked: URL;
  try {
    asked = new URL(url);
  } catch {
    return 'its url is not an absolute URL';
  }
  let page: URL | undefined;
  try {
    page = new URL(approvalUrl('x'));
  } catch {
    // A server-relative page (no public address configured) has no host to compare; the path rule still holds.
    page = undefined;
  }
  if (page !== undefined && hostOf(page) !== '' && hostOf(asked) === hostOf(page)) {
    return "its url is on Toolgate's own host, where only Toolgate's approval page may send a user";
  }
  const segments = decodedPath(asked.pathname)
    .replace(/\\/g, '/')
    .split('/')
    .map((s) => s.split(';')[0]!.trim().toLowerCase());
  if (segments.includes('approvals')) return "its url has the path of Toolgate's approval page (/approvals/), which only Toolgate may send a user to";
  return undefined;
}
