import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from './package-root';

/**
 * Deterministic texts for the evaluation and the benchmark: generated English-like prose (optionally
 * with a sprinkle of PII), realistic log lines, and ordinary source code read from packages already on
 * disk. Same seed, same text, on every machine.
 */

/** Categories of the model-based detectors; every other implemented type is a signature detector. */
export const CLASSIFIER_CATEGORIES: ReadonlySet<string> = new Set(['prompt_defense', 'content_moderation']);

/** The repository root (tools/package-root.ts). */
export { PACKAGE_ROOT };

/** mulberry32: a small, fast, deterministic PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
const int = (rand: () => number, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const hex = (rand: () => number, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(rand, 0, 15)]).join('');

const WORDS = (
  'the of and to in is was for on that with as by it at from this be are have or an which one had not but ' +
  'all were when we there can been has more if will would their what so about out up into them some could ' +
  'time than first other very after most also made over did many before must through back years where much ' +
  'your way well down should because each just those people how too little state good very make world still ' +
  'own see men work long get here between both life being under never day same another know while last might ' +
  'us great old year off come since against go came right used take three project team report meeting budget ' +
  'quarter customer product release schedule review design system service feature update change support ' +
  'account order delivery invoice contract policy request issue question answer summary analysis market'
).split(' ');

const CAPITALISED = ['However', 'Meanwhile', 'In addition', 'Overall', 'Next week', 'Last month', 'The team', 'Our customer'];

/** Plausible PII, valid by format (and checksum where one exists), for the sprinkle in prose. */
const PII = [
  'jane.doe@acme-corp.com',
  'm.garcia@example-bank.es',
  '+1 415-555-0132',
  '(212) 555-0187',
  '4111 1111 1111 1111',
  '5500-0000-0000-0004',
  'SSN 536-22-1234',
  'GB82 WEST 1234 5698 7654 32',
  'DE89370400440532013000',
  '203.0.113.42',
  '2001:db8::8a2e:370:7334',
  '1600 Amphitheatre Parkway, Mountain View, CA 94043',
  'https://bit.ly/3xYz9Qk',
];

export interface ProseOptions {
  seed: number;
  /** Approximate length in characters (the result is exactly this long). */
  length: number;
  /** Average characters between two PII items; 0 = none. */
  piiEvery?: number;
}

/** English-like prose: sentences of common words, capitalised starts, punctuation, paragraphs. */
export function generateProse(options: ProseOptions): string {
  const rand = prng(options.seed);
  const parts: string[] = [];
  let size = 0;
  let sincePii = 0;
  while (size < options.length) {
    const words = Array.from({ length: int(rand, 6, 18) }, () => pick(rand, WORDS));
    let sentence = `${rand() < 0.2 ? pick(rand, CAPITALISED) + ', ' : ''}${words.join(' ')}`;
    sentence = sentence.charAt(0).toUpperCase() + sentence.slice(1);
    if (options.piiEvery && sincePii >= options.piiEvery * (0.5 + rand())) {
      sentence += `, contact ${pick(rand, PII)}`;
      sincePii = 0;
    }
    const piece = `${sentence}${rand() < 0.1 ? '?' : '.'}${rand() < 0.12 ? '\n\n' : ' '}`;
    parts.push(piece);
    size += piece.length;
    sincePii += piece.length;
  }
  return parts.join('').slice(0, options.length);
}

const LEVELS = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'];
const METHODS = ['GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH'];
const ROUTES = ['/api/v1/orders', '/api/v1/users/me', '/health', '/api/v2/invoices', '/metrics', '/api/v1/search', '/static/app.js'];
const SERVICES = ['http', 'db', 'cache', 'queue', 'scheduler', 'auth', 'billing'];

function uuid(rand: () => number): string {
  return `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-${pick(rand, ['8', '9', 'a', 'b'])}${hex(rand, 3)}-${hex(rand, 12)}`;
}

function timestamp(rand: () => number, i: number): string {
  const base = Date.UTC(2024, 2, 14, 9, 0, 0) + i * 137 + int(rand, 0, 99);
  return new Date(base).toISOString();
}

/**
 * Realistic application log lines: timestamps, request ids, UUIDs, trace ids, git SHAs, durations,
 * versions, counters, Kafka offsets, container digests. No personal data (no IPs, no addresses).
 */
export function generateLogs(options: { seed: number; length: number }): string {
  const rand = prng(options.seed);
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < options.length; i++) {
    const ts = timestamp(rand, i);
    const level = pick(rand, LEVELS);
    const svc = pick(rand, SERVICES);
    const line = pick(rand, [
      () =>
        `${ts} ${level} [${svc}] req_id=${uuid(rand)} method=${pick(rand, METHODS)} path=${pick(rand, ROUTES)}/${int(rand, 1, 99999)} status=${pick(rand, [200, 200, 201, 204, 304, 400, 404, 500])} duration=${(rand() * 250).toFixed(1)}ms bytes=${int(rand, 0, 250000)}`,
      () => `${ts} ${level} [deploy] commit ${hex(rand, 40)} deployed as build ${int(rand, 1, 3)}.${int(rand, 0, 40)}.${int(rand, 0, 20)}+build.${int(rand, 1000, 9999)}`,
      () => `${ts} ${level} [${svc}] trace_id=${hex(rand, 32)} span_id=${hex(rand, 16)} parent=${hex(rand, 16)} sampled=${rand() < 0.5}`,
      () => `${ts} ${level} [runtime] pid=${int(rand, 100, 65535)} rss=${int(rand, 80, 2048)}MB heap_used=${int(rand, 20, 900)}MB gc_pause=${(rand() * 20).toFixed(2)}ms uptime=${int(rand, 1, 999999)}s`,
      () => `${ts} ${level} [queue] job=${pick(rand, ['invoice-export', 'email-digest', 'reindex', 'thumbnail'])} attempt=${int(rand, 1, 5)}/5 next_retry_in=${int(rand, 1, 300)}s job_id=${int(rand, 100000, 99999999)}`,
      () => `${ts} ${level} [kafka] topic=orders.v${int(rand, 1, 3)} partition=${int(rand, 0, 31)} offset=${int(rand, 1_000_000, 9_999_999_999)} lag=${int(rand, 0, 5000)}`,
      () => `${ts} ${level} [cache] hit_ratio=${rand().toFixed(3)} keys=${int(rand, 1000, 999999)} evictions=${int(rand, 0, 999)} ttl=${int(rand, 1, 86400)}s`,
      () => `${ts} ${level} [container] pulled registry.internal/app/api@sha256:${hex(rand, 64)} in ${(rand() * 9).toFixed(2)}s`,
      () => `${ts} ${level} [${svc}] upgraded dependency from version ${int(rand, 1, 9)}.${int(rand, 0, 30)}.${int(rand, 0, 30)} to version ${int(rand, 1, 9)}.${int(rand, 0, 30)}.${int(rand, 0, 30)}.${int(rand, 0, 300)}`,
      () => `${ts} ${level} [db] query=SELECT_ORDERS rows=${int(rand, 0, 5000)} elapsed=${(rand() * 900).toFixed(3)}ms pool=${int(rand, 1, 20)}/20 txn=${hex(rand, 12)}`,
      () => `${ts} ${level} [billing] order_id=ORD-2024-${String(int(rand, 1, 999999)).padStart(6, '0')} amount=${(rand() * 900).toFixed(2)} currency=${pick(rand, ['EUR', 'USD', 'GBP'])} items=${int(rand, 1, 12)}`,
      () => `${ts} ${level} [auth] session=${uuid(rand)} token_exp=${int(rand, 1_700_000_000, 1_800_000_000)} scopes=read,write client=web-${int(rand, 1, 9)}`,
    ])();
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n').slice(0, options.length);
}

export interface CorpusFile {
  name: string;
  text: string;
}

/**
 * Ordinary source code from packages on disk: fastify's lib/*.js, then TypeScript's lib.es*.d.ts, then
 * typescript.d.ts, until `bytes` characters are collected (the last file is cut at a line end).
 */
export function sourceCodeCorpus(bytes: number): CorpusFile[] {
  const nm = path.join(PACKAGE_ROOT, 'node_modules');
  const listed = (dir: string, filter: (f: string) => boolean) =>
    fs.existsSync(dir) ? fs.readdirSync(dir).filter(filter).sort().map((f) => path.join(dir, f)) : [];
  const files = [
    ...listed(path.join(nm, 'fastify', 'lib'), (f) => f.endsWith('.js')),
    ...listed(path.join(nm, 'typescript', 'lib'), (f) => /^lib\.es(5|20\d\d[.\w-]*)\.d\.ts$/.test(f)),
    path.join(nm, 'typescript', 'lib', 'typescript.d.ts'),
  ].filter((f) => fs.existsSync(f));
  const out: CorpusFile[] = [];
  let total = 0;
  for (const file of files) {
    if (total >= bytes) break;
    let text = fs.readFileSync(file, 'utf8');
    if (total + text.length > bytes) {
      const cut = text.indexOf('\n', bytes - total);
      text = cut < 0 ? text : text.slice(0, cut + 1);
    }
    out.push({ name: path.relative(PACKAGE_ROOT, file), text });
    total += text.length;
  }
  return out;
}

/** Source code of exactly `length` characters starting `offset` characters into the corpus (repeated if needed). */
export function sourceCodeText(length: number, offset = 0): string {
  const files = sourceCodeCorpus(Math.max(length + offset, 64 * 1024));
  let text = files.map((f) => f.text).join('\n');
  while (text.length < length + offset && text.length > 0) text += `\n${text}`;
  return text.slice(offset, offset + length);
}

/**
 * Real English as LLM tools see it: the README.md of every package installed in node_modules (markdown,
 * links, badges, escapes, as they are), in sorted path order, joined by blank lines. The same lockfile
 * gives the same text (about 2 MB). Unlike generateProse's small vocabulary, it has the word variety of
 * real prompts and tool results, which is what makes feature hashing and the heads' weight lookups
 * cost what they cost in production.
 */
export function readmeProse(): string {
  const nm = path.join(PACKAGE_ROOT, 'node_modules');
  const dirs: string[] = [];
  for (const entry of fs.readdirSync(nm).sort()) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) {
      for (const sub of fs.readdirSync(path.join(nm, entry)).sort()) dirs.push(path.join(nm, entry, sub));
    } else dirs.push(path.join(nm, entry));
  }
  const parts: string[] = [];
  for (const dir of dirs) {
    const file = path.join(dir, 'README.md');
    if (fs.existsSync(file)) parts.push(fs.readFileSync(file, 'utf8'));
  }
  return parts.join('\n\n');
}

/** `count` texts of `length` characters from readmeProse(), starting `step` characters apart (wrapping around). */
export function readmeTexts(count: number, length: number, step = 25_000): string[] {
  const all = readmeProse();
  if (all.length < length) throw new Error(`only ${all.length} characters of README prose in node_modules`);
  const doubled = all + '\n\n' + all;
  return Array.from({ length: count }, (_, i) => {
    const start = (i * step) % all.length;
    return doubled.slice(start, start + length);
  });
}
