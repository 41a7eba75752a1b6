import ipaddr from 'ipaddr.js';
import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { DigitRunMatches, textIndexOf, type TextIndex } from '../../text-index';
import { AbortTicker, codeAt, ContextWords, isAsciiLetter, isDigit, isHexDigit, isWordChar, MAX_FINDINGS } from './signals';

/**
 * pii/ip_address: IPv4 (dotted quad) and IPv6 (full, compressed "::", IPv4-mapped "::ffff:1.2.3.4",
 * with a zone "%eth0"), validated with `ipaddr.js`.
 *
 * IPv4 candidates are maximal dotted digit runs with exactly four parts: "1.3.6.1.4.1.311" (an OID) and
 * "1.2.3.4.5" are not addresses. Not reported: a run glued to letters or '_' ("v1.2.3.4", "1.2.3.4rc1"),
 * after "name-", "Chrome/" or "nginx:" (file names, user agents, image tags; "addr:10.0.0.1" stays),
 * followed by "-beta" or "+build" (semver), after a version or numbering word ("version 1.2.3.4",
 * "release: 1.2.3.4", "AssemblyVersion(\"1.0.0.0\")", "==1.2.3.4", "section 2.3.1.4", "OID 2.5.4.3"),
 * octets with leading zeros ("01.02.03.04"), netmasks ("255.255.255.0"). A quoted value whose key is not
 * about addresses (`"typescript": "5.9.3.1"`, but not `"client_ip": "…"`) is ambiguous and scores 0.50.
 *
 * IPv6 candidates have at least two colons; hex-only words, MAC addresses (six groups), times
 * ("12:30:45"), "std::vector" and mixed-case words ("Abc::Def") are rejected, and only addresses in a
 * meaningful range are kept (global unicast 2000::/3, private, link-local, mapped, loopback …).
 *
 * Confidence:
 *   public (global unicast)                                    0.90, 0.95 with an address hint
 *   private (10/8, 172.16/12, 192.168/16, 100.64/10 CGNAT, 169.254/16 link-local, fc00::/7, fe80::/10)
 *                                                              0.60, 0.80 with an address hint
 *   loopback, unspecified, broadcast, multicast, documentation (192.0.2/24, 198.51.100/24,
 *   203.0.113/24, 2001:db8::/32), benchmarking, reserved       0.40 (L4 only: no leak by themselves)
 * An address hint is a context word (ip, host, server, ssh, ping, dns, gateway, client, …), a port
 * (":8080"), a CIDR suffix ("/24") or a URL scheme before it ("http://").
 */

export const IP_CONFIDENCE = {
  publicWithHint: 0.95,
  public: 0.9,
  privateWithHint: 0.8,
  private: 0.6,
  ambiguous: 0.5,
  special: 0.4,
} as const;

// Maximal runs of dot-separated digit groups with at least four parts; the part count is checked in code.
// The look-behind starts a match only at the beginning of a run, so each run is walked once (linear).
// Sticky: tried at digit-run starts only (text-index.ts), where every match begins.
const IPV4_RUN = /(?<![0-9.])[0-9]+(?:\.[0-9]+){3}/y;
/** The rest of the run in bounded steps (an unbounded `{3,}` overflowed irregexp's stack on millions of parts). */
const IPV4_MORE = /(?:\.[0-9]+){1,1024}/y;
// A superset of IPv6 text from its first colon: hex groups and colons, an optional dotted IPv4 tail, an
// optional zone; ipaddr.js decides. Bounded length; matching starts at a colon (a fast scan, where a
// pattern starting with optional hex digits is tried at every position), and the up to four hex digits
// before it are added in code.
// Sticky: tried only at the colons that indexOf finds (a regular expression would visit every character
// of the text looking for one; indexOf skips to it at memory speed).
const IPV6_FROM_COLON = /:[0-9A-Fa-f:.]{0,44}[0-9A-Fa-f:](?:%[0-9A-Za-z_.-]{1,32})?/y;

const MAX_IPV6_LENGTH = 45;

export const ADDRESS_WORDS = new ContextWords([
  'ip', 'ips', 'ipv4', 'ipv6', 'inet6', 'inet4', 'ip address', 'address', 'addr', 'host', 'hostname', 'server',
  'ping', 'ssh', 'connect', 'connected', 'connecting', 'connection', 'client', 'remote', 'src', 'dst', 'source', 'destination',
  'inet', 'gateway', 'dns', 'nameserver', 'resolver', 'proxy', 'subnet', 'route', 'listen', 'listening', 'bind',
  'firewall', 'allowlist', 'whitelist', 'blocklist', 'blacklist', 'banned', 'origin', 'peer', 'endpoint',
  'upstream', 'curl', 'nslookup', 'traceroute', 'vpn', 'router', 'lan', 'wan', 'nat', 'egress', 'ingress',
  'login from', 'logged in from', 'request from', 'x-forwarded-for', 'forwarded', 'real-ip', 'geoip', 'whois',
]);

export class IpAddressDetector implements Detector {
  readonly type = 'pii/ip_address' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const ticker = new AbortTicker(signal);
    const v6Spans: Array<{ start: number; end: number }> = [];
    const findings = text.includes(':') ? scanIpv6(text, ticker, v6Spans) : [];
    if (text.includes('.')) findings.push(...scanIpv4(textIndexOf(input), ticker, v6Spans));
    findings.sort((a, b) => a.start - b.start);
    return findings.slice(0, MAX_FINDINGS);
  }
}

function scanIpv4(index: TextIndex, ticker: AbortTicker, v6Spans: ReadonlyArray<{ start: number; end: number }>): DetectorFinding[] {
  const { text } = index;
  const findings: DetectorFinding[] = [];
  let v6 = 0; // v6Spans and matches both come in text order
  const matches = new DigitRunMatches(index, IPV4_RUN, undefined, IPV4_MORE);
  for (let m = matches.next(); m && findings.length < MAX_FINDINGS; m = matches.next()) {
    ticker.tick();
    const start = m.index;
    const end = start + m[0].length;
    matches.from = end;
    while (v6 < v6Spans.length && (v6Spans[v6]?.end ?? 0) <= start) v6++;
    if (v6 < v6Spans.length && (v6Spans[v6]?.start ?? end) < end) continue; // the tail of "::ffff:1.2.3.4"
    const octets = dottedQuad(m[0]);
    if (!octets) continue;
    const where: Where = { text, start, end };
    if (isVersionLike(where)) continue;
    const confidence = ipv4Score(new ipaddr.IPv4(octets), where);
    if (confidence > 0) findings.push({ confidence, start, end });
  }
  IPV4_RUN.lastIndex = 0;
  return findings;
}

/** The four octets of a strict dotted quad (0..255, no leading zeros as in "01.02.03.04"), else undefined. */
function dottedQuad(s: string): number[] | undefined {
  if (s.length > 15) return undefined; // "255.255.255.255": never split a run of millions of parts
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const octets: number[] = [];
  for (const p of parts) {
    if (p.length > 3 || (p.length > 1 && p.charCodeAt(0) === 0x30)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    octets.push(n);
  }
  return octets;
}

function scanIpv6(text: string, ticker: AbortTicker, v6Spans: Array<{ start: number; end: number }>): DetectorFinding[] {
  const findings: DetectorFinding[] = [];
  // The same matches as a global scan: each search resumes at the end of the previous match.
  for (let colon = text.indexOf(':'); colon >= 0 && findings.length < MAX_FINDINGS; ) {
    IPV6_FROM_COLON.lastIndex = colon;
    const m = IPV6_FROM_COLON.exec(text);
    if (!m) {
      colon = text.indexOf(':', colon + 1);
      continue;
    }
    colon = text.indexOf(':', m.index + m[0].length);
    ticker.tick();
    let start = m.index;
    while (start > m.index - 4 && isHexDigit(codeAt(text, start - 1))) start--;
    let raw = text.slice(start, m.index + m[0].length);
    // A trailing '.' or ':' ends a sentence or introduces a port in prose ("… fe80::1.", "::1:"), unless
    // it is part of "::".
    while (raw.endsWith('.') || (raw.endsWith(':') && !raw.endsWith('::'))) raw = raw.slice(0, -1);
    const end = start + raw.length;
    const address = parseIpv6(text, raw, start, end);
    if (!address) continue;
    v6Spans.push({ start, end });
    const confidence = ipv6Score(address, { text, start, end });
    if (confidence > 0) findings.push({ confidence, start, end });
  }
  return findings;
}

/** The parsed address when `raw` (at text[start, end)) is a plausible, valid IPv6 literal. */
function parseIpv6(text: string, raw: string, start: number, end: number): ipaddr.IPv6 | undefined {
  if (raw.length > MAX_IPV6_LENGTH + 33 || !/[0-9A-Fa-f]/.test(raw)) return undefined;
  const before = codeAt(text, start - 1);
  const after = codeAt(text, end);
  // Glued to a word ("std::map", "Foo::Bar"), or part of a longer colon sequence.
  if (isWordChar(before) || before === 0x3a || before === 0x2e) return undefined;
  if (isWordChar(after) || (after === 0x3a && isHexDigit(codeAt(text, end + 1)))) return undefined;
  const zoneAt = raw.indexOf('%');
  const bare = zoneAt >= 0 ? raw.slice(0, zoneAt) : raw;
  if (bare.length > MAX_IPV6_LENGTH || countColons(bare) < 2) return undefined;
  if (hasMixedCase(bare)) return undefined;
  if (!ipaddr.IPv6.isValid(raw)) return undefined;
  // Without "::" an address has eight groups; MACs (six) and times never get here. A compressed form
  // with at most two decimal-looking groups ("2001::2", "1::5") reads as a slice or ratio in code.
  if (bare.includes('::') && /^[0-9:]+$/.test(bare) && bare !== '::1' && bare.split(':').filter(Boolean).length <= 2) {
    return undefined;
  }
  try {
    return ipaddr.IPv6.parse(raw);
  } catch {
    return undefined;
  }
}

function countColons(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 0x3a) n++;
  return n;
}

/** True when the hex letters mix upper and lower case ("Abc::Def"): identifiers, not addresses. */
function hasMixedCase(s: string): boolean {
  return /[a-f]/.test(s) && /[A-F]/.test(s);
}

function ipv6Score(address: ipaddr.IPv6, where: Where): number {
  const C = IP_CONFIDENCE;
  const range: string = address.range(); // the typings lag behind the runtime's range names
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') {
    // "::ffff:1.2.3.4", NAT64 "64:ff9b::1.2.3.4": as private or public as the IPv4 inside.
    const p = address.parts;
    const v4 = new ipaddr.IPv4([(p[6] ?? 0) >> 8, (p[6] ?? 0) & 0xff, (p[7] ?? 0) >> 8, (p[7] ?? 0) & 0xff]);
    return ipv4Score(v4, where);
  }
  const hint = hasAddressHint(where);
  switch (range) {
    case 'uniqueLocal':
    case 'linkLocal':
    case 'deprecatedSiteLocal':
      return hint ? C.privateWithHint : C.private;
    case 'loopback':
    case 'unspecified':
    case 'multicast':
    case 'reserved':
    case 'benchmarking':
    case 'discard':
      return C.special;
    case 'unicast':
    case 'teredo':
    case '6to4':
    case 'orchid2':
    case 'deprecatedOrchid':
    case 'as112v6':
    case 'amt':
    case 'droneRemoteIdProtocolEntityTags': {
      const first = address.parts[0] ?? 0;
      // Only 2000::/3 is allocated as global unicast; "abc::def" or "1:2:3:4:5:6:7:8" are not addresses.
      if (first < 0x2000 || first > 0x3fff) return 0;
      return hint ? C.publicWithHint : C.public;
    }
    default:
      return 0;
  }
}

interface Where {
  text: string;
  start: number;
  end: number;
}

// A version or numbering word right before the number ("version 1.2.3.4", "Release: 1.2.3.4", "upgrade to
// 1.2.3.4", "section 2.3.1.4", "OID 2.5.4.3"). Long words may end an identifier ("AssemblyVersion(").
const VERSION_BEFORE = new RegExp(
  '(?:(?<![a-z0-9])(?:v|ver|vers|rel|fw|sdk|rev|tag|ios|macos|oid|rfc|iso|fig|art|para|step|' +
    'chrome|firefox|safari|windows|android|kernel|python|java|php|ruby|perl|upgrade|upgraded|patch|' +
    'section|sections|chapter|clause|paragraph|figure|appendix|article|§)|' +
    '(?:version|versions|release|released|build|firmware|revision|semver))' +
    '_{0,2}["\'`]?\\s*(?:(?:is|to|of|no\\.?)\\s+)?[:=]?\\s*\\(?\\s*["\'`]?$',
  'i',
);
// Capitalised document numbering ("Table 2.3.4.1", "Annex 1.2.1.4"); lower-case "table" stays, as in
// "routing table: 10.0.0.1".
const NUMBERING_BEFORE = /(?:^|[^A-Za-z])(?:Table|Tab\.|Fig\.|Eq\.|Exhibit|Annex|Schedule|Chapter|Part)\s*$/;
// A numbered heading: the number opens a line and a capitalised word follows ("1.2.3.4 Scope").
const HEADING_AFTER = /^ [A-Z][a-z]/;
// Version operators: "==1.2.3.4", ">=1.2.3.4", "^1.2.3.4" ("@" is not one: "ssh root@10.0.0.1").
const OPERATOR_BEFORE = /(?:==|>=|<=|~=|!=|\^|~)\s*["'`]?$/;
// A quoted value with its key: `"key": "`, `key = '`, `'key' => "`.
const QUOTED_KEY_BEFORE = /["']?([A-Za-z0-9_@/.-]{1,64})["']?\s*(?:[:=]|=>)\s*(["'])$/;
const ADDRESS_KEY_PARTS = new Set([
  'ip', 'ips', 'ipv4', 'ipv6', 'addr', 'address', 'addresses', 'host', 'hosts', 'hostname', 'server', 'servers',
  'dns', 'ns', 'nameserver', 'nameservers', 'gateway', 'gw', 'proxy', 'endpoint', 'remote', 'client', 'peer',
  'src', 'dst', 'source', 'dest', 'destination', 'upstream', 'bind', 'listen', 'origin', 'target', 'resolver',
  'router', 'subnet', 'cidr', 'net', 'network', 'nat', 'wan', 'lan', 'egress', 'ingress', 'allow', 'deny',
  'block', 'whitelist', 'blacklist', 'allowlist', 'forwarded', 'forward', 'real', 'public', 'private',
  'external', 'internal', 'inet', 'vip', 'lb', 'master', 'replica', 'primary', 'db', 'database', 'redis', 'broker',
]);

/** True when a word of the key (split at camelCase, '_', '-', '.', digits) names an address. */
function isAddressKey(key: string): boolean {
  const words = key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z]+/);
  return words.some((w) => ADDRESS_KEY_PARTS.has(w));
}

/** Semver-ish or product-version uses of a dotted quad (checked on the 24 characters around it). */
function isVersionLike({ text, start, end }: Where): boolean {
  const before = codeAt(text, start - 1);
  const before2 = codeAt(text, start - 2);
  const after = codeAt(text, end);
  if (isWordChar(before) || isWordChar(after)) return true; // v1.2.3.4, 1.2.3.4rc1
  if ((before === 0x2e || before === 0x2d) && isWordChar(before2)) return true; // pkg-1.2.3.4, a.1.2.3.4
  if ((after === 0x2d || after === 0x2b) && isWordChar(codeAt(text, end + 1))) return true; // -beta, +build
  // "nginx:1.25.3.1", "image:1.2.3.4": a tag after a name; but "addr:10.0.0.1", "ip:8.8.8.8" are addresses.
  if (before === 0x3a && isWordChar(before2)) {
    const word = /[A-Za-z0-9_-]*$/.exec(text.slice(Math.max(0, start - 33), start - 1))?.[0] ?? '';
    if (!isAddressKey(word)) return true;
  }
  if (before === 0x2f && isAsciiLetter(before2) && /(?:^|\s)[A-Za-z][\w.-]*$/.test(text.slice(Math.max(0, start - 33), start - 1))) {
    return true; // user agent token: Chrome/120.0.0.0 (but not a URL path /hosts/10.0.0.1)
  }
  const prefix = text.slice(Math.max(0, start - 24), start);
  if (VERSION_BEFORE.test(prefix) || OPERATOR_BEFORE.test(prefix) || NUMBERING_BEFORE.test(prefix)) return true;
  const lineStart = /(?:^|\n)[ \t#]*$/.test(prefix);
  return lineStart && HEADING_AFTER.test(text.slice(end, end + 3)) && !ADDRESS_WORDS.near(text, start, end);
}

/** Undefined when the address is not a quoted key/value; otherwise whether the key names an address. */
function quotedKey({ text, start, end }: Where): boolean | undefined {
  const quote = codeAt(text, start - 1);
  if (quote !== 0x22 && quote !== 0x27) return undefined;
  const m = QUOTED_KEY_BEFORE.exec(text.slice(Math.max(0, start - 72), start));
  if (!m || text[end] !== m[2]) return undefined;
  return isAddressKey(m[1] ?? '');
}

const SPECIAL_V4: ReadonlySet<string> = new Set(['loopback', 'unspecified', 'broadcast', 'multicast', 'reserved']);

/** 255.255.255.0 and friends: a run of one bits, then zeros. */
function isNetmask(octets: readonly number[]): boolean {
  const value = (((octets[0] ?? 0) << 24) | ((octets[1] ?? 0) << 16) | ((octets[2] ?? 0) << 8) | (octets[3] ?? 0)) >>> 0;
  if (value === 0) return false;
  const inverted = ~value >>> 0;
  return (inverted & (inverted + 1)) === 0;
}

function ipv4Score(address: ipaddr.IPv4, where: Where): number {
  const C = IP_CONFIDENCE;
  if (isNetmask(address.octets)) return 0;
  const range = address.range();
  if (SPECIAL_V4.has(range)) return C.special;
  const key = quotedKey(where);
  const hint = key === true || (key === undefined && hasAddressHint(where));
  switch (range) {
    case 'private':
    case 'linkLocal':
    case 'carrierGradeNat':
      return hint ? C.privateWithHint : C.private;
    default:
      if (key === false && !hint) return C.ambiguous;
      return hint ? C.publicWithHint : C.public;
  }
}

/** A context word, a port, a CIDR suffix or a URL scheme right before the address. */
export function hasAddressHint({ text, start, end }: Where): boolean {
  const after = codeAt(text, end);
  if ((after === 0x3a || after === 0x2f) && isDigit(codeAt(text, end + 1))) return true; // :8080, /24
  if (codeAt(text, end) === 0x5d && codeAt(text, end + 1) === 0x3a) return true; // [v6]:443
  if (text.startsWith('://', start - 3) || text.startsWith('://[', start - 4)) return true;
  if (text.slice(start, end).includes('%')) return true; // an IPv6 zone ("%eth0") only follows addresses
  return ADDRESS_WORDS.near(text, start, end);
}
