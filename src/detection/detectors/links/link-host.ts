import { domainToASCII } from 'node:url';
import type { CandidateKind } from './link-candidates';

/**
 * Splitting a link candidate into its parts, and classifying IP-literal hosts. No regex over unbounded
 * input: every pattern here runs on one host (<= 300 characters).
 */

export interface LinkParts {
  kind: CandidateKind;
  /** Lowercase ASCII host (IDN converted to its A-label form); IPv6 without brackets. */
  host: string;
  /** True when the written host had non-ASCII letters or an `xn--` label. */
  idn: boolean;
  userinfo: string;
  /** True when something follows the host (port, path, query or fragment). */
  hasPath: boolean;
  ipv6: boolean;
}

/** Parses `https://user@host:port/path`, `www.host/path` or `host.tld/path`; null when there is no host. */
export function splitLink(candidate: string, kind: CandidateKind): LinkParts | null {
  let rest = candidate;
  if (kind === 'scheme') rest = rest.slice(rest.indexOf('://') + 3);
  const authorityEnd = firstIndexOf(rest, '/?#');
  const authority = rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at) : '';
  const hostPort = at >= 0 ? authority.slice(at + 1) : authority;
  let host: string;
  let ipv6 = false;
  let afterHost: string;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) return null;
    host = hostPort.slice(1, close).toLowerCase();
    afterHost = hostPort.slice(close + 1);
    ipv6 = true;
  } else {
    const colon = hostPort.indexOf(':');
    host = (colon >= 0 ? hostPort.slice(0, colon) : hostPort).toLowerCase().replace(/\.+$/, '');
    afterHost = colon >= 0 ? hostPort.slice(colon) : '';
  }
  if (host.length === 0) return null;
  const hasPath = afterHost.length > 0 || authorityEnd < rest.length;
  let idn = host.split('.').some((l) => l.startsWith('xn--'));
  if (!ipv6 && /[^\x00-\x7f]/.test(host)) {
    const ascii = domainToASCII(host);
    if (ascii.length === 0) return null;
    host = ascii;
    idn = true;
  }
  return { kind, host, idn, userinfo, hasPath, ipv6 };
}

function firstIndexOf(s: string, chars: string): number {
  for (let i = 0; i < s.length; i++) if (chars.includes(s[i] as string)) return i;
  return s.length;
}

export type IpClass = 'loopback' | 'private' | 'public' | 'obfuscated';

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Classifies an IP-literal host, or null when the host is a name. */
export function classifyIpHost(host: string, ipv6: boolean): IpClass | null {
  if (ipv6) {
    if (host === '::1' || host === '::') return 'loopback';
    if (/^f[cd]|^fe[89ab]/.test(host)) return 'private';
    return 'public';
  }
  const m = DOTTED_QUAD.exec(host);
  if (m) {
    const o = m.slice(1, 5).map(Number);
    if (o.some((x) => x > 255)) return null;
    if (m.slice(1, 5).some((x) => x.length > 1 && x.startsWith('0'))) return 'obfuscated';
    const [a = 0, b = 0] = o;
    if (a === 127 || a === 0) return 'loopback';
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254)) {
      return 'private';
    }
    return 'public';
  }
  // http://2130706433/, http://0x7f000001/, http://0x7f.1/: numeric hosts written to dodge filters.
  if (/^(?:\d{6,10}|0x[0-9a-f]{1,8})$/.test(host) || /^(?:0x[0-9a-f]{1,2}|\d{1,3})(?:\.(?:0x[0-9a-f]{1,2}|\d{1,3})){1,3}$/.test(host)) {
    return 'obfuscated';
  }
  return null;
}
