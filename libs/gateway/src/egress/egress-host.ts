import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { GatewayError } from '../denials/gateway-error.js';

const MAX_HOST_LENGTH = 253;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Normalises a host an operator allows for egress: a bare lowercase host name (IDNs in their
 * ASCII form) or an IP literal (IPv6 without brackets, in its canonical short form). Surrounding
 * whitespace and one trailing dot are removed; anything else that is not a bare host (a scheme,
 * path, port, userinfo, wildcard, inner space, an empty or over-long name, a bad label) is
 * refused with a message saying which.
 */
export function normalizeEgressHost(input: string): string {
  if (typeof input !== 'string') throw invalid('a host must be a string');
  const trimmed = input.trim();
  if (trimmed === '') throw invalid('the host is empty');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    throw invalid(`'${shown(trimmed)}' is a URL; give the bare host name without the scheme (e.g. 'example.com')`);
  }
  if (/\s/.test(trimmed)) throw invalid(`'${shown(trimmed)}' contains a space; give one bare host name`);
  if (trimmed.includes('*')) throw invalid(`'${shown(trimmed)}' contains a wildcard; allow each host by its exact name`);
  if (trimmed.includes('@')) throw invalid(`'${shown(trimmed)}' contains userinfo ('@'); give the bare host name`);
  if (/[/?#\\]/.test(trimmed)) throw invalid(`'${shown(trimmed)}' contains a path; give the bare host name`);

  const bracketed = /^\[(.*)\]$/.exec(trimmed);
  if (bracketed) {
    if (!isIPv6(bracketed[1] as string)) throw invalid(`'${shown(trimmed)}' is not a valid IPv6 address`);
    return canonicalIPv6(bracketed[1] as string);
  }
  if (isIPv6(trimmed)) return canonicalIPv6(trimmed);
  if (trimmed.includes(':')) throw invalid(`'${shown(trimmed)}' contains a port; give the bare host name (ports are not part of the allowlist)`);

  const name = trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
  if (name === '') throw invalid('the host is empty');
  if (isIPv4(name)) return name;
  const ascii = domainToASCII(name.toLowerCase());
  if (ascii === '') throw invalid(`'${shown(trimmed)}' is not a valid host name`);
  if (ascii.length > MAX_HOST_LENGTH) throw invalid(`the host is longer than ${MAX_HOST_LENGTH} characters`);
  const labels = ascii.split('.');
  for (const label of labels) {
    if (!LABEL.test(label)) {
      throw invalid(
        label === ''
          ? `'${shown(trimmed)}' has an empty label ('..')`
          : `'${shown(trimmed)}' has an invalid label '${shown(label)}' (letters, digits and inner hyphens only, at most 63)`,
      );
    }
  }
  // URL parsing turns `1.2.3` or `0x7f.1` into an IPv4 address; refusing them here keeps the
  // allowlist and the URLs it is compared with speaking about the same thing.
  if (/^(?:0x[0-9a-f]*|[0-9]+)$/.test(labels[labels.length - 1] as string)) {
    throw invalid(`'${shown(trimmed)}' looks like an IP address but is not a dotted-quad IPv4 address`);
  }
  return ascii;
}

/**
 * The normalised host of an http(s) URL, or why it cannot be used. WHATWG URL parsing already
 * lowercases, punycodes and canonicalises IP literals, so the result compares equal to an
 * allowlist entry made by `normalizeEgressHost`.
 */
export function hostOfUrl(value: string): { readonly host: string } | { readonly problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'is not a valid absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `uses '${url.protocol}'; only http and https are allowed` };
  if (url.username !== '' || url.password !== '') return { problem: 'contains userinfo (user:password@), which is not allowed' };
  let host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return { problem: 'has no host' };
  return { host };
}

function canonicalIPv6(address: string): string {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    // Zone ids (`fe80::1%eth0`) pass `isIPv6` but name an interface, not a host.
    throw invalid(`'${shown(address)}' is not an IPv6 address usable in a URL`);
  }
}

function shown(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function invalid(message: string): GatewayError {
  return new GatewayError('INVALID', message);
}
