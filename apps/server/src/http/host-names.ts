import { isIPv6 } from 'node:net';

/**
 * Host names as the HTTP guard compares them. Every name has exactly one accepted spelling
 * (lower case; IPv4 as four decimal numbers without leading zeros; IPv6 bracketed and compressed
 * as browsers serialize it), so a sibling spelling of an allowed address (`2130706433`,
 * `0x7f000001`, `127.1`, `[0:0::1]`, `localhost.`) never matches by accident.
 */

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const LOOPBACK_QUAD = new RegExp(`^127(?:\\.${OCTET}){3}$`);
// WHATWG URL treats a name whose last label is a number (decimal, octal or 0x-hex) as an IPv4
// address, so such a name is an IP spelling and must be the dotted quad to be accepted.
const NUMERIC_LABEL = /^(?:\d+|0x[0-9a-f]*)$/;
/** `host[:port]` as RFC 9110 allows it in a Host header; anything else (userinfo, paths, spaces) is malformed. */
const HOST_AND_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

/** The loopback names a page on another site cannot make a browser send: localhost, 127.0.0.0/8, [::1]. */
export const LOOPBACK_NAMES_DESCRIPTION = 'localhost, 127.0.0.0/8, [::1]';

/** A received host name in canonical form, or why it is not one. */
export type HostNameResult = { readonly name: string } | { readonly problem: string };

/**
 * Checks that a host name as received (Host header, Origin, request target) is in its one
 * canonical spelling, ignoring letter case. IPv6 must be bracketed.
 */
export function canonicalReceivedName(raw: string): HostNameResult {
  const name = raw.toLowerCase();
  if (name.startsWith('[')) {
    const inner = name.slice(1, -1);
    if (!name.endsWith(']') || !isIPv6(inner)) return { problem: 'is not a valid IPv6 address' };
    const canonical = canonicalIpv6(inner);
    return canonical === name ? { name } : { problem: `is not the canonical spelling of an IPv6 address (write ${canonical})` };
  }
  return canonicalDnsOrIpv4(name);
}

/** `host[:port]` split, or undefined when the value is not that shape. The port is not checked against anything. */
export function splitHostAndPort(value: string): { readonly host: string; readonly port?: number } | undefined {
  const match = HOST_AND_PORT.exec(value);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && port > 65535) return undefined;
  return port === undefined ? { host: match[1]! } : { host: match[1]!, port };
}

/** Whether a canonical name is one of the loopback names (always allowed: a browser page cannot forge them). */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || LOOPBACK_QUAD.test(name);
}

/** Whether a canonical name is an "any address" that no client should use as a host (0.0.0.0, [::]). */
export function isWildcardAddress(name: string): boolean {
  return name === '0.0.0.0' || name === '[::]';
}

/**
 * Canonical form of an operator-configured host (TOOLGATE_ALLOWED_HOSTS, TOOLGATE_HOST): lenient
 * about IPv6 spelling and brackets, strict about everything that could widen the allowlist.
 */
export function canonicalConfiguredHost(raw: string): HostNameResult {
  const value = raw.trim().toLowerCase();
  if (value === '') return { problem: 'is empty' };
  if (value.includes('*')) return { problem: 'is a wildcard; list each host name' };
  if (value.includes('/')) return { problem: 'must be a bare host name, without scheme or path' };
  if (isIPv6(value)) return { name: canonicalIpv6(value) };
  if (value.startsWith('[')) {
    if (/\]:\d*$/.test(value)) return { problem: 'must not carry a port (the guard checks the name only)' };
    const inner = value.slice(1, -1);
    if (!value.endsWith(']') || !isIPv6(inner)) return { problem: 'is not a valid IPv6 address' };
    return { name: canonicalIpv6(inner) };
  }
  if (value.includes(':')) return { problem: 'must not carry a port (the guard checks the name only)' };
  return canonicalDnsOrIpv4(value);
}

function canonicalDnsOrIpv4(name: string): HostNameResult {
  if (name.length === 0) return { problem: 'is empty' };
  if (name.length > 253) return { problem: 'is longer than 253 characters' };
  if (name.endsWith('.')) return { problem: 'ends with a dot (write the name without it)' };
  const labels = name.split('.');
  if (NUMERIC_LABEL.test(labels[labels.length - 1]!)) {
    return DOTTED_QUAD.test(name) ? { name } : { problem: 'is not a canonical IPv4 address (write four decimal numbers, e.g. 127.0.0.1)' };
  }
  if (!labels.every((label) => DNS_LABEL.test(label))) return { problem: 'is not a valid DNS name' };
  return { name };
}

/** A browser origin: scheme, canonical host name and effective port (80/443 when none is written). */
export interface Origin {
  readonly scheme: 'http' | 'https';
  readonly name: string;
  readonly port: number;
}

/** `scheme://host[:port]` with nothing after it: how a browser serializes an origin. */
const ORIGIN = /^(https?):\/\/([^/?#@\s]*)$/;

/** Parses an Origin header as received: exactly an origin serialization, canonical host. */
export function parseReceivedOrigin(value: string): Origin | { readonly problem: string } {
  const match = ORIGIN.exec(value.toLowerCase());
  if (!match) return { problem: 'is not a scheme://host[:port] origin' };
  const authority = splitHostAndPort(match[2]!);
  if (!authority) return { problem: 'is not a scheme://host[:port] origin' };
  const host = canonicalReceivedName(authority.host);
  if ('problem' in host) return host;
  const scheme = match[1] as Origin['scheme'];
  return { scheme, name: host.name, port: authority.port ?? defaultPort(scheme) };
}

/** Parses an operator-configured origin (TOOLGATE_ALLOWED_ORIGINS); a trailing `/` is tolerated. */
export function parseConfiguredOrigin(raw: string): Origin | { readonly problem: string } {
  const value = raw.trim().toLowerCase().replace(/\/$/, '');
  if (value === '*') return { problem: "is a wildcard; list each origin (a page on any site could then call the gateway)" };
  if (value === 'null') return { problem: 'is the origin of sandboxed frames and file: pages, which any site can produce' };
  const match = ORIGIN.exec(value);
  const authority = match ? splitHostAndPort(match[2]!) : undefined;
  if (!match || !authority) return { problem: 'must be an origin: http(s)://host[:port], without path, query or credentials' };
  const host = canonicalConfiguredHost(authority.host);
  if ('problem' in host) return host;
  if (isWildcardAddress(host.name)) return { problem: 'names an any-address (0.0.0.0 or [::]), which no browser page has as its origin' };
  if (authority.port === 0) return { problem: 'has port 0' };
  const scheme = match[1] as Origin['scheme'];
  return { scheme, name: host.name, port: authority.port ?? defaultPort(scheme) };
}

/** The origin as a browser serializes it: the default port is left out. */
export function serializeOrigin(origin: Origin): string {
  const port = origin.port === defaultPort(origin.scheme) ? '' : `:${origin.port}`;
  return `${origin.scheme}://${origin.name}${port}`;
}

function defaultPort(scheme: Origin['scheme']): number {
  return scheme === 'https' ? 443 : 80;
}

/** The WHATWG serialization of an IPv6 address, bracketed (what a browser puts in Host and Origin). */
function canonicalIpv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname;
}

/** A bounded, printable piece of a header for an error message: never more than 80 characters. */
export function quoteHeader(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 80 ? `${printable.slice(0, 80)}…` : printable;
}
