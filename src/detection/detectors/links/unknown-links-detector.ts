import { domainToUnicode } from 'node:url';
import { parse } from 'tldts';
import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import {
  ABUSED_TLDS,
  AMBIGUOUS_BARE_TLDS,
  CODE_RECEIVERS,
  COMMON_BARE_GTLDS,
  FILE_EXTENSION_TLDS,
  PLACEHOLDER_LABELS,
  SHORTENER_DOMAINS,
} from './lists/link-lists';
import { WELL_KNOWN_DOMAINS } from './lists/well-known-domains';
import { findCandidates, LinkHints, tokenAround, tokenMayHoldLink, trimTrailing, type CandidateKind } from './link-candidates';
import { classifyIpHost, splitLink, type LinkParts } from './link-host';
import { imitatedBrand, isBrand } from './lookalike';

/**
 * unknown_links: URLs (with a scheme, `www.`, or bare `host.tld/path`) whose registrable domain is neither
 * well known (lists/well-known-domains.ts, ~1,100 hand-curated domains) nor allowed.
 *
 * Registrable domain: tldts with the private section of the public suffix list, so `evil.github.io` is
 * its own domain (anyone can publish there) while `docs.github.com` belongs to github.com. Hosts under a
 * government / academic suffix (`.gov`, `.edu`, `gov.uk`, `ac.uk`, `gouv.fr`, …) count as well known.
 *
 * Confidence:
 *   0.97  IDN host that folds to a phishing-target brand (Cyrillic "аpple.com")
 *   0.95  look-alike of a brand ("g00gle.com", "paypa1.com", "secure-paypal.com", "paypal.com.evil.io"),
 *         numeric/hex-obfuscated IP hosts
 *   0.93  other punycode / IDN hosts
 *   0.92  public IP-literal host
 *   0.90  URL shorteners (bit.ly, t.co, tinyurl.com, …), .onion
 *   0.85  unknown domain on a frequently abused TLD, or a URL carrying user:password@
 *   0.80  plain unknown domain; private-network IP host
 *   0.40  scheme URL to a host with no public suffix (`http://jenkins.corp`) or a loopback IP
 * Not reported: well-known and allowed domains (and subdomains), localhost, reserved TLDs (.test,
 * .example, .invalid, .localhost), emails (the part before @ and the domain after it), file names and
 * code member accesses (`README.md`, `update-gyp.py`, `user.name`: a real TLD that is also a common
 * file extension needs a scheme, `www.` or a path; one that is a common member name needs one of those
 * or a hyphen in the name).
 *
 * Allowed domains: the policy has no allowed-domains field yet. `new UnknownLinksDetector({ allowedDomains })`
 * takes them (an entry allows the domain and its subdomains; `*.corp.com` is the same as `corp.com`);
 * once the policy grows the field, the engine can build one detector per policy version with it.
 */

export interface UnknownLinksOptions {
  /** Domains the policy allows: the entry itself and every subdomain are never reported. */
  allowedDomains?: Iterable<string>;
  /** Replaces the shipped well-known list (tests, special deployments). */
  wellKnownDomains?: Iterable<string>;
}

const MAX_FINDINGS = 1000;
const SHORTENERS = new Set(SHORTENER_DOMAINS);
const DEFAULT_WELL_KNOWN = new Set(WELL_KNOWN_DOMAINS);
const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local']);
const INSTITUTIONAL_SUFFIX = /^(?:gov|edu|mil|int)$|^(?:gov|gouv|gob|govt|go|gv|edu|ac|mil|nhs|police|parliament)\.[a-z]{2,3}$/;
const BEFORE_BARE_REJECT = new Set(['@', '.', '_', '-', '$', '#', '/', '\\', ':', '~', '=', '%', '&', '+']);
const AFTER_BARE_REJECT = new Set(['@', '(', '_', '$', '=', '-']);

export class UnknownLinksDetector implements Detector {
  readonly type = 'unknown_links' as const;
  private readonly allowed: ReadonlySet<string>;
  private readonly wellKnown: ReadonlySet<string>;

  constructor(options: UnknownLinksOptions = {}) {
    this.allowed = new Set([...(options.allowedDomains ?? [])].map((d) => d.trim().toLowerCase().replace(/^\*\./, '')));
    this.wellKnown = options.wellKnownDomains ? new Set([...options.wellKnownDomains].map((d) => d.toLowerCase())) : DEFAULT_WELL_KNOWN;
  }

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const findings: DetectorFinding[] = [];
    const hints = new LinkHints(text);
    let n = 0;
    for (let at = hints.next(0); at >= 0 && findings.length < MAX_FINDINGS; ) {
      if (++n % 256 === 0) signal.throwIfAborted();
      const token = tokenAround(text, at);
      if (tokenMayHoldLink(text, token)) this.scanToken(text, token.start, token.end, findings);
      at = hints.next(Math.max(token.end, at + 1));
    }
    return findings.slice(0, MAX_FINDINGS);
  }

  private scanToken(text: string, start: number, end: number, out: DetectorFinding[]): void {
    const token = text.slice(start, end);
    for (const c of findCandidates(token)) {
      const raw = trimTrailing(c.raw);
      if (raw.length === 0) continue;
      const before = c.index > 0 ? (token[c.index - 1] as string) : '';
      const after = token.charAt(c.index + raw.length);
      const protocolRelative = c.kind === 'bare' && token.startsWith('//', c.index - 2) && token[c.index - 3] !== ':';
      const kind: CandidateKind = protocolRelative ? 'scheme' : c.kind;
      if (kind !== 'scheme' && (before === '@' || after === '@')) continue;
      if (kind === 'bare' && (BEFORE_BARE_REJECT.has(before) || AFTER_BARE_REJECT.has(after))) continue;
      if (kind === 'bare' && readsAsCode(text, start + c.index, start + c.index + raw.length)) continue;
      const parts = splitLink(raw, c.kind);
      if (!parts) continue;
      const confidence = this.score(parts, kind, raw);
      if (confidence > 0) out.push({ confidence, start: start + c.index, end: start + c.index + raw.length });
    }
  }

  /** 0 = not reported. */
  score(parts: LinkParts, kind: CandidateKind, raw: string): number {
    const ip = classifyIpHost(parts.host, parts.ipv6);
    if (ip) return kind === 'bare' ? 0 : scoreIp(ip);
    if (parts.ipv6) return 0;
    const host = parts.host;
    if (host === 'localhost' || this.isAllowed(host)) return 0;
    const icann = parse(host);
    const tld = host.slice(host.lastIndexOf('.') + 1);
    if (RESERVED_TLDS.has(tld)) return 0;
    if (!icann.isIcann || !icann.domain) return kind === 'bare' ? 0 : 0.4;
    if (kind === 'bare' && !this.bareLooksLikeLink(raw, parts, icann.publicSuffix ?? '')) return 0;
    const hosted = parse(host, { allowPrivateDomains: true });
    const onPlatform = hosted.isPrivate === true && hosted.domain !== null;
    const registrable = onPlatform ? (hosted.domain as string) : icann.domain;
    if (this.wellKnown.has(registrable) || this.isAllowed(registrable)) return 0;
    // Listing a platform's private suffix itself (githubusercontent.com) trusts every host under it.
    if (onPlatform && this.wellKnown.has(hosted.publicSuffix ?? '')) return 0;
    if (PLACEHOLDER_LABELS.has(icann.domainWithoutSuffix ?? '')) return 0;
    if (registrable === icann.domain && INSTITUTIONAL_SUFFIX.test(icann.publicSuffix ?? '')) return 0;
    if (SHORTENERS.has(icann.domain)) return 0.9;
    const label = onPlatform ? (hosted.domainWithoutSuffix ?? '') : (icann.domainWithoutSuffix ?? '');
    return this.scoreUnknown(parts, registrable, label, icann.publicSuffix ?? '', onPlatform);
  }

  private scoreUnknown(parts: LinkParts, registrable: string, label: string, suffix: string, onPlatform: boolean): number {
    const subdomain = parts.host.slice(0, Math.max(0, parts.host.length - registrable.length - 1));
    // A brand's own name on a hosting platform (facebook.github.io) is usually the brand's own page.
    const imitated = imitatedBrand(label);
    const brand = (imitated && !(onPlatform && imitated === label) ? imitated : null) ?? subdomainBrand(subdomain, this.wellKnown);
    if (parts.idn) {
      const unicodeLabel = domainToUnicode(registrable).split('.')[0] ?? '';
      return brand || imitatedBrand(unicodeLabel) ? 0.97 : 0.93;
    }
    let score = 0.8;
    if (brand) score = 0.95;
    if (suffix === 'onion') score = Math.max(score, 0.9);
    if (ABUSED_TLDS.has(suffix.slice(suffix.lastIndexOf('.') + 1))) score = Math.max(score, 0.85);
    if (parts.userinfo.length > 0) {
      const deceptive = [...this.wellKnown].some((d) => parts.userinfo.toLowerCase().includes(d));
      score = Math.max(score, deceptive ? 0.95 : 0.85);
    }
    return score;
  }

  /** Bare `name.tld` is a link unless it reads as a file name or code (see the class comment). */
  private bareLooksLikeLink(raw: string, parts: LinkParts, suffix: string): boolean {
    const writtenHost = raw.slice(0, firstHostEnd(raw));
    const lastDot = writtenHost.lastIndexOf('.');
    const writtenTld = writtenHost.slice(lastDot + 1);
    if (writtenTld !== writtenTld.toLowerCase()) return false;
    if (/[a-z][A-Z]/.test(writtenHost)) return false;
    const labels = parts.host.split('.');
    if (labels.length === 2 && CODE_RECEIVERS.has(labels[0] as string) && !parts.hasPath) return false;
    const topLabel = suffix.slice(suffix.lastIndexOf('.') + 1);
    if (parts.hasPath || suffix.includes('.')) return true;
    const name = parts.host.slice(0, parts.host.length - suffix.length - 1);
    // A hyphen cannot appear in a code identifier (`type2.target` has digits, `my-site.app` is a domain).
    const nameLooksLikeDomain = name.slice(name.lastIndexOf('.') + 1).includes('-');
    if (FILE_EXTENSION_TLDS.has(topLabel)) return false;
    if (AMBIGUOUS_BARE_TLDS.has(topLabel)) return nameLooksLikeDomain;
    return topLabel.length === 2 || COMMON_BARE_GTLDS.has(topLabel) || nameLooksLikeDomain;
  }

  private isAllowed(host: string): boolean {
    if (this.allowed.size === 0) return false;
    for (let h = host; h.length > 0; ) {
      if (this.allowed.has(h)) return true;
      const dot = h.indexOf('.');
      if (dot < 0) break;
      h = h.slice(dot + 1);
    }
    return false;
  }
}

const CODE_KEYWORD_BEFORE = /(?:^|[^\w$])(?:typeof|instanceof|new|await|delete|void|return)\s+$/;

/** `Debug2.fail = fail`, `typeof performance2.now === "function"`: a member access, not a domain. */
function readsAsCode(text: string, start: number, end: number): boolean {
  let i = end;
  while (i < text.length && i - end < 4 && (text[i] === ' ' || text[i] === '\t')) i++;
  const next = text[i];
  if (next === '=' || (next === '!' && text[i + 1] === '=')) return true;
  return CODE_KEYWORD_BEFORE.test(text.slice(Math.max(0, start - 12), start));
}

function firstHostEnd(raw: string): number {
  for (let i = 0; i < raw.length; i++) if (':/?#'.includes(raw[i] as string)) return i;
  return raw.length;
}

function scoreIp(ip: NonNullable<ReturnType<typeof classifyIpHost>>): number {
  switch (ip) {
    case 'obfuscated':
      return 0.95;
    case 'public':
      return 0.92;
    case 'private':
      return 0.8;
    default:
      return 0.4;
  }
}

/** `paypal.com.evil.io`, `login-paypal.evil.io`: a brand or well-known domain inside the subdomain. */
function subdomainBrand(subdomain: string, wellKnown: ReadonlySet<string>): string | null {
  if (subdomain.length === 0) return null;
  const labels = subdomain.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const pair = `${labels[i]}.${labels[i + 1]}`;
    if (wellKnown.has(pair)) return pair;
  }
  for (const label of labels) {
    for (const part of label.split('-')) {
      if (part.length >= 5 && isBrand(part)) return part;
    }
  }
  return null;
}
