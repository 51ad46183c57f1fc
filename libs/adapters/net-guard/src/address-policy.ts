import ipaddr from 'ipaddr.js';

/** A parsed IPv4 or IPv6 address. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;
type Address = IpAddress;
type Cidr = [Address, number];

/**
 * The class of an address. `unicast` is the public internet; every other class is blocked unless
 * an operator opened it with an allowed CIDR.
 */
export type AddressRange =
  | 'unicast'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'carrierGradeNat'
  | 'linkLocal'
  | 'uniqueLocal'
  | 'siteLocal'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'invalid';

/** How an IPv4 address was carried inside an IPv6 one. */
export type EmbeddingForm = 'ipv4Mapped' | 'ipv4Translated' | 'nat64' | '6to4' | 'teredo';

/** The verdict on one address. */
export interface AddressClass {
  readonly allowed: boolean;
  /** The address's class; for an embedded IPv4 address, the class of the embedded address. */
  readonly range: AddressRange;
  /** Set when the verdict came from an IPv4 address embedded in this IPv6 address. */
  readonly via?: EmbeddingForm;
  /** True when the address is outside `unicast` but inside an operator's allowed CIDR. */
  readonly allowlisted?: boolean;
}

/** A parsed allowed CIDR, as produced by {@link parseCidrList}. */
export interface AllowedCidr {
  readonly text: string;
  readonly cidr: Cidr;
}

const v4 = (text: string): Cidr => ipaddr.IPv4.parseCIDR(text);
const v6 = (text: string): Cidr => ipaddr.IPv6.parseCIDR(text);

/**
 * Special-purpose IPv4 blocks (IANA registry, RFC 6890 and successors). First match wins, so the
 * broadcast address is listed before the 240/4 block that contains it. Anything not listed is
 * public unicast.
 */
const IPV4_RANGES: ReadonlyArray<readonly [AddressRange, Cidr]> = [
  ['unspecified', v4('0.0.0.0/8')], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['loopback', v4('127.0.0.0/8')],
  ['private', v4('10.0.0.0/8')],
  ['private', v4('172.16.0.0/12')],
  ['private', v4('192.168.0.0/16')],
  ['carrierGradeNat', v4('100.64.0.0/10')],
  ['linkLocal', v4('169.254.0.0/16')], // includes 169.254.169.254, the cloud metadata endpoint
  ['reserved', v4('192.0.0.0/24')], // IETF protocol assignments
  ['documentation', v4('192.0.2.0/24')],
  ['reserved', v4('192.88.99.0/24')], // deprecated 6to4 relay anycast
  ['benchmarking', v4('198.18.0.0/15')],
  ['documentation', v4('198.51.100.0/24')],
  ['documentation', v4('203.0.113.0/24')],
  ['multicast', v4('224.0.0.0/4')],
  ['broadcast', v4('255.255.255.255/32')],
  ['reserved', v4('240.0.0.0/4')],
];

/** IPv6 blocks that carry an IPv4 address; the embedded address is classified instead. */
const IPV6_EMBEDDINGS: ReadonlyArray<readonly [EmbeddingForm, Cidr]> = [
  ['ipv4Mapped', v6('::ffff:0:0/96')],
  ['ipv4Translated', v6('::ffff:0:0:0/96')], // RFC 6145 SIIT
  ['nat64', v6('64:ff9b::/96')], // RFC 6052 well-known prefix
  ['6to4', v6('2002::/16')],
  ['teredo', v6('2001::/32')],
];

/** Special-purpose IPv6 blocks; checked after the embeddings. */
const IPV6_RANGES: ReadonlyArray<readonly [AddressRange, Cidr]> = [
  ['unspecified', v6('::/128')],
  ['loopback', v6('::1/128')],
  ['reserved', v6('::/96')], // deprecated IPv4-compatible addresses
  ['private', v6('64:ff9b:1::/48')], // RFC 8215 local-use NAT64
  ['reserved', v6('100::/64')], // discard-only
  ['reserved', v6('2001::/23')], // IETF protocol assignments (benchmarking, ORCHID, AMT, …)
  ['documentation', v6('2001:db8::/32')],
  ['documentation', v6('3fff::/20')],
  ['reserved', v6('5f00::/16')], // SRv6 SIDs
  ['uniqueLocal', v6('fc00::/7')],
  ['linkLocal', v6('fe80::/10')],
  ['siteLocal', v6('fec0::/10')],
  ['multicast', v6('ff00::/8')],
];

/** Global unicast IPv6 is allocated only from 2000::/3; everything else is unassigned. */
const IPV6_GLOBAL_UNICAST = v6('2000::/3');

/** Human wording of each class, used in refusal messages. */
export const RANGE_DESCRIPTIONS: Readonly<Record<AddressRange, string>> = {
  unicast: 'a public address',
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  carrierGradeNat: 'a carrier-grade NAT address',
  linkLocal: 'a link-local address (this includes cloud metadata endpoints)',
  uniqueLocal: 'a unique-local address',
  siteLocal: 'a site-local address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  invalid: 'an invalid address',
};

const EMBEDDING_DESCRIPTIONS: Readonly<Record<EmbeddingForm, string>> = {
  ipv4Mapped: 'an IPv4-mapped IPv6 address',
  ipv4Translated: 'an IPv4-translated IPv6 address',
  nat64: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
};

/** One sentence fragment naming why an address class is refused, e.g. "a private address embedded in a 6to4 address". */
export function describeAddressClass(verdict: AddressClass): string {
  const base = RANGE_DESCRIPTIONS[verdict.range];
  return verdict.via ? `${base} embedded in ${EMBEDDING_DESCRIPTIONS[verdict.via]}` : base;
}

/** One to four dot-separated parts, each decimal/octal digits or `0x` hex: every IPv4 spelling. */
const IPV4_SHAPE = /^(?:0x[0-9a-f]*|\d+)(?:\.(?:0x[0-9a-f]*|\d+)){0,3}$/i;

/**
 * Parses an IP address in any spelling the resolver or URL parser may hand over: dotted quad,
 * the legacy forms `127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1`, bracketed IPv6 and zone ids.
 * Returns undefined for anything that is not an IP address.
 */
export function parseIpLiteral(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  // ipaddr.js answers "not an address" by throwing, which is slow on the hot path; ordinary host
  // names fail this shape test first. Every form ipaddr.js accepts passes it.
  if (!bare.includes(':') && !IPV4_SHAPE.test(bare)) return undefined;
  try {
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

function inAllowed(address: Address, allowed: readonly AllowedCidr[]): boolean {
  return allowed.some(({ cidr }) => cidr[0].kind() === address.kind() && address.match(cidr));
}

function classifyV4(address: ipaddr.IPv4, allowed: readonly AllowedCidr[]): AddressClass {
  const range = IPV4_RANGES.find(([, cidr]) => address.match(cidr))?.[0] ?? 'unicast';
  if (range === 'unicast') return { allowed: true, range };
  return inAllowed(address, allowed) ? { allowed: true, range, allowlisted: true } : { allowed: false, range };
}

/** The IPv4 address an IPv6 embedding carries (RFC 4291, 6052, 3056, 4380). */
function embeddedV4(form: EmbeddingForm, address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts;
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (form) {
    case 'ipv4Mapped':
    case 'ipv4Translated':
    case 'nat64':
      return [fromWords(p[6]!, p[7]!)];
    case '6to4':
      return [fromWords(p[1]!, p[2]!)];
    case 'teredo':
      // The Teredo server sits in bits 32–63; the client's public address is stored inverted.
      return [fromWords(p[2]!, p[3]!), fromWords(~p[6]! & 0xffff, ~p[7]! & 0xffff)];
  }
}

function classifyV6(address: ipaddr.IPv6, allowed: readonly AllowedCidr[]): AddressClass {
  if (inAllowed(address, allowed)) {
    const range = classifyV6(address, []).range;
    return range === 'unicast' ? { allowed: true, range } : { allowed: true, range, allowlisted: true };
  }
  const embedding = IPV6_EMBEDDINGS.find(([, cidr]) => address.match(cidr));
  if (embedding) {
    const [form] = embedding;
    // A mapped address is the IPv4 address itself (the kernel dials it over IPv4), so the
    // operator's IPv4 allowlist applies. The translated forms reach some other network's
    // gateway, so only the default policy applies to what they embed.
    const policy = form === 'ipv4Mapped' ? allowed : [];
    for (const inner of embeddedV4(form, address)) {
      const verdict = classifyV4(inner, policy);
      if (!verdict.allowed || (form === 'ipv4Mapped' && verdict.allowlisted)) return { ...verdict, via: form };
    }
    return { allowed: true, range: 'unicast', via: form };
  }
  const range = IPV6_RANGES.find(([, cidr]) => address.match(cidr))?.[0];
  if (range) return { allowed: false, range };
  if (!address.match(IPV6_GLOBAL_UNICAST)) return { allowed: false, range: 'reserved' };
  return { allowed: true, range: 'unicast' };
}

/**
 * Classifies one IP address against the default egress policy: only public unicast is allowed,
 * unless the address lies in one of `allowed` (the operator's opened ranges). IPv6 forms that
 * embed an IPv4 address (mapped, NAT64, 6to4, Teredo) are judged by the address they embed.
 * Anything that does not parse as an IP address is `invalid` and refused.
 */
export function classifyAddress(ip: string, allowed: readonly AllowedCidr[] = []): AddressClass {
  const address = parseIpLiteral(ip);
  return address ? classifyParsedAddress(address, allowed) : { allowed: false, range: 'invalid' };
}

/** {@link classifyAddress} for an address that is already parsed (the client's hot path). */
export function classifyParsedAddress(address: IpAddress, allowed: readonly AllowedCidr[] = []): AddressClass {
  return address.kind() === 'ipv4'
    ? classifyV4(address as ipaddr.IPv4, allowed)
    : classifyV6(address as ipaddr.IPv6, allowed);
}

/**
 * Parses the operator's list of opened ranges, e.g. `TOOLGATE_EGRESS_ALLOWED_CIDRS`:
 * comma-separated CIDRs (`10.0.0.0/8, fd00::/8`); a bare address opens just that address.
 * Throws an `Error` naming the first bad entry. An empty or blank text opens nothing.
 */
export function parseCidrList(text: string): AllowedCidr[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map(parseCidr);
}

/** Parses one CIDR (or bare address); throws an `Error` that says what is wrong with it. */
export function parseCidr(entry: string): AllowedCidr {
  const slash = entry.indexOf('/');
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const prefixText = slash === -1 ? undefined : entry.slice(slash + 1);
  const hint = 'expected a CIDR such as 10.0.0.0/8 or fd00::/8, or a single address';
  // Only canonical spellings: an operator list is no place for `0x7f.1`-style surprises.
  const isV4 = ipaddr.IPv4.isValidFourPartDecimal(addressText);
  const isV6 = !isV4 && ipaddr.IPv6.isValid(addressText) && !addressText.includes('%');
  if (!isV4 && !isV6) throw new Error(`invalid CIDR '${entry}': '${addressText}' is not an IP address (${hint})`);
  const maxBits = isV4 ? 32 : 128;
  let bits = maxBits;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxBits) {
      throw new Error(`invalid CIDR '${entry}': the prefix length must be a number from 0 to ${maxBits}`);
    }
    bits = Number(prefixText);
  }
  const address = ipaddr.parse(addressText);
  const network = isV4
    ? ipaddr.IPv4.networkAddressFromCIDR(`${addressText}/${bits}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${addressText}/${bits}`);
  if (network.toString() !== address.toString()) {
    const suggestion = isV4 ? network.toString() : (network as ipaddr.IPv6).toRFC5952String();
    throw new Error(`invalid CIDR '${entry}': host bits are set; did you mean ${suggestion}/${bits}?`);
  }
  return { text: `${addressText}/${bits}`, cidr: [address, bits] };
}
