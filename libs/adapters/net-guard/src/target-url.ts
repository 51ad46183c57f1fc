import { EgressDeniedError, ToolError } from '@toolgate/contracts';

/**
 * Parses a request URL with the WHATWG parser (the same one the HTTP stack uses, so the host we
 * check is the host we dial) and refuses what the guard never sends: other schemes and
 * credentials in the URL. Legacy IPv4 spellings (`127.1`, `0x7f000001`, `0177.0.0.1`) come out
 * of the parser as dotted quads, and IPv6 literals in brackets, ready to classify.
 */
export function parseTargetUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError(`${describe(text)} is not a valid absolute http(s) URL`, 'INVALID_URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EgressDeniedError(url.hostname || url.protocol, `only http: and https: URLs are allowed, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    // Never echo the credentials: name only the host.
    throw new EgressDeniedError(url.hostname, 'URLs with credentials (user:password@host) are not allowed');
  }
  if (url.hostname === '') throw new ToolError(`${describe(text)} has no host`, 'INVALID_URL');
  return url;
}

/** The host as the URL spells it, without the brackets of an IPv6 literal. */
export function bareHostname(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Quotes the URL for a message, unless it may carry credentials (an '@'), which are never echoed. */
function describe(text: string): string {
  if (text.includes('@')) return 'the URL';
  return `'${text.length > 200 ? `${text.slice(0, 200)}…` : text}'`;
}
