import { JWT_PART_MAX, PEM_MAX } from './credential-rules';
import { codeAt, isWordChar } from '../pii/signals';
import { classifyKey } from './secret-value';

/**
 * Where secrets/credential may find something, found without walking the text once per format.
 *
 * Every provider format (credential-rules.ts) contains a character that is rare in prose at a fixed
 * place: `_` (ghp_, github_pat_, sk_live_, whsec_, svc_sk_, npm_, hf_, dop_v1_, shpat_), `-` (sk-,
 * glpat-, xoxb-, pypi-, GOCSPX-, -----BEGIN), `:` (scheme://user:pass@, the Slack webhook URL, a
 * Telegram bot token's ":AA"), `J` (a JWT's "eyJ"), `SG.` (SendGrid) or a capital `A` (AKIA…, AIza,
 * AccountKey=). `String.prototype.indexOf` finds a single character at memory speed, so the text is
 * searched once per anchor character and each hit is checked with a few string comparisons.
 *
 * Formats that need a key and an assignment operator (AWS secret access keys, Authorization headers)
 * and the generic assignments are found from the operator instead: every `=` and `:` is followed back
 * over blanks, an optional `]` and quote, to the key before it; the key is tested for a secret word
 * (memoised: keys repeat). A window is only pushed for keys classifyKey accepts (assignments) or
 * that name an AWS secret / Authorization (providers).
 *
 * The windows are a superset of those of the literal alternations this replaces (same literals, same
 * word-boundary rule); the RE2 rules decide inside them.
 */

export interface HintWindow {
  start: number;
  end: number;
}

export interface CredentialHints {
  /** Around provider prefixes: CREDENTIAL_RE runs here. */
  providers: HintWindow[];
  /** Around assignments whose key names a secret: ASSIGNMENT_RE runs here. */
  assignments: HintWindow[];
}

/** How far before a hint a credential can start, and (by default) how far after it can end. */
const BACK_REACH = 96;
const DEFAULT_REACH = 700;
/** From an assignment's key: the value can be this far past the operator. */
const KEYWORD_REACH = 560;

const PEM_REACH = PEM_MAX + 600;
const JWT_REACH = 2 * JWT_PART_MAX + 2_100;

/** Prefixes needing a word boundary before them, found through their first `_` (offset of that `_`). */
const UNDERSCORE_PREFIXES = expand([
  'gh[pousr]_', 'github_pat_', '[sr]k_live_', '[sr]k_test_', 'whsec_', 'svc_sk_', 'npm_', 'hf_', 'do[opr]_v1_',
  'shp(at|ss|ca|pa)_',
]);
/** Prefixes needing a word boundary before them, found through their first `-`. */
const DASH_PREFIXES = expand(['glpat-', 'xox[abposr]-', 'sk-', 'pypi-', 'GOCSPX-']);
const UNDERSCORE_BY_CHAR_BEFORE = byCharBefore(UNDERSCORE_PREFIXES);
const DASH_BY_CHAR_BEFORE = byCharBefore(DASH_PREFIXES);
/** AWS key id prefixes and Google API keys (word boundary before), found through the capital `A`. */
const A_PREFIXES = new Set(['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'AIza']);

/** Keys (of `key = value`, `key: value`) whose value a provider rule reads: an AWS secret or Authorization. */
const PROVIDER_KEY = /secret_?access_?key|aws_?secret_?key|authorization/i;
/** A secret word inside a key (the generic assignment rule's key words). */
const SECRET_WORD = /pass|pwd|secret|token|[a-z_-]key|credential|auth|bearer/i;

const KEY_KIND_NONE = 0;
const KEY_KIND_ASSIGNMENT = 1;
const KEY_KIND_PROVIDER = 2;
const KEY_MEMO = new Map<string, number>();
const KEY_MEMO_LIMIT = 10_000;

/** Longest key followed back from an operator (the generic rule allows 48 + word + 32 characters). */
const MAX_KEY = 96;

export function credentialHints(text: string, signal: AbortSignal): CredentialHints {
  const providers: HintWindow[] = [];
  const assignments: HintWindow[] = [];
  const n = text.length;
  const push = (at: number, reach = DEFAULT_REACH) =>
    providers.push({ start: Math.max(0, at - BACK_REACH), end: Math.min(n, at + reach) });
  let checked = 0;
  const tick = () => {
    if (++checked % 2048 === 0) signal.throwIfAborted();
  };

  for (let i = text.indexOf('_'); i >= 0; i = text.indexOf('_', i + 1)) {
    tick();
    const bucket = UNDERSCORE_BY_CHAR_BEFORE[codeAt(text, i - 1)];
    if (bucket !== undefined) pushPrefixes(text, i, bucket, push);
  }
  for (let i = text.indexOf('-'); i >= 0; i = text.indexOf('-', i + 1)) {
    tick();
    if (text.startsWith('-----BEGIN', i)) {
      push(i, PEM_REACH);
      continue;
    }
    const bucket = DASH_BY_CHAR_BEFORE[codeAt(text, i - 1)];
    if (bucket !== undefined) pushPrefixes(text, i, bucket, push);
  }
  for (let i = text.indexOf('A'); i >= 0; i = text.indexOf('A', i + 1)) {
    tick();
    if (text.startsWith('AccountKey=', i)) push(i);
    else if (A_PREFIXES.has(text.slice(i, i + 4)) && !isWordChar(codeAt(text, i - 1))) push(i);
  }
  for (let i = text.indexOf('J'); i >= 0; i = text.indexOf('J', i + 1)) {
    tick();
    if (i >= 2 && text.charCodeAt(i - 1) === 0x79 && text.charCodeAt(i - 2) === 0x65 && !isWordChar(codeAt(text, i - 3))) {
      push(i - 2, JWT_REACH);
    }
  }
  for (let i = text.indexOf('SG.'); i >= 0; i = text.indexOf('SG.', i + 1)) {
    tick();
    if (!isWordChar(codeAt(text, i - 1))) push(i);
  }
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) {
    tick();
    if (text.startsWith('://', i)) {
      if (text.startsWith('hooks.slack', i + 3) || userinfoFollows(text, i + 3)) push(i);
    } else if (text.charCodeAt(i + 1) === 0x41 && text.charCodeAt(i + 2) === 0x41) push(i); // ":AA"
    keyBefore(text, i, push, assignments);
  }
  for (let i = text.indexOf('='); i >= 0; i = text.indexOf('=', i + 1)) {
    tick();
    keyBefore(text, i, push, assignments);
  }
  return { providers, assignments };
}

/** The prefixes of `bucket` that end at the anchor `i` and have a word boundary before them. */
function pushPrefixes(text: string, i: number, bucket: ReadonlyArray<readonly [string, number]>, push: (at: number) => void): void {
  for (const [literal, offset] of bucket) {
    const at = i - offset;
    if (at >= 0 && text.startsWith(literal, at) && !isWordChar(codeAt(text, at - 1))) push(at);
  }
}

/**
 * Prefixes by the character right before their anchor ("p" for "ghp_"), so an anchor in code (snake_case
 * identifiers, hyphenated words) costs one array lookup unless that character can end a prefix.
 */
function byCharBefore(prefixes: ReadonlyArray<readonly [string, number]>): Array<Array<readonly [string, number]> | undefined> {
  const table: Array<Array<readonly [string, number]> | undefined> = new Array(128).fill(undefined);
  for (const entry of prefixes) {
    const code = entry[0].charCodeAt(entry[1] - 1);
    (table[code] ??= []).push(entry);
  }
  return table;
}

/** `://` then 1..128 characters other than whitespace, `/` and `@`, then `:` (a user name and password). */
function userinfoFollows(text: string, from: number): boolean {
  const limit = Math.min(text.length, from + 129);
  for (let j = from; j < limit; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x3a) return j > from;
    if (c === 0x2f || c === 0x40 || isSpace(c)) return false;
  }
  return false;
}

/**
 * The key before the assignment operator at `op` (blanks, an optional `]` and quote between): pushes an
 * assignment window when it names a secret, a provider window when it names an AWS secret key or an
 * Authorization header.
 */
function keyBefore(text: string, op: number, push: (at: number) => void, assignments: HintWindow[]): void {
  let end = op;
  while (end > 0 && op - end < 8 && isSpace(text.charCodeAt(end - 1))) end--;
  if (text.charCodeAt(end - 1) === 0x5d) end--; // ]
  const q = text.charCodeAt(end - 1);
  if (q === 0x22 || q === 0x27) end--;
  let start = end;
  while (start > 0 && end - start < MAX_KEY && isKeyChar(text.charCodeAt(start - 1))) start--;
  if (end - start < 3) return;
  const key = text.slice(start, end);
  let kind = KEY_MEMO.get(key);
  if (kind === undefined) {
    kind = KEY_KIND_NONE;
    if (SECRET_WORD.test(key) && classifyKey(key)) kind |= KEY_KIND_ASSIGNMENT;
    if (PROVIDER_KEY.test(key)) kind |= KEY_KIND_PROVIDER;
    if (KEY_MEMO.size >= KEY_MEMO_LIMIT) KEY_MEMO.clear();
    KEY_MEMO.set(key, kind);
  }
  if (kind & KEY_KIND_ASSIGNMENT) {
    assignments.push({ start: Math.max(0, start - 8), end: Math.min(text.length, op + KEYWORD_REACH) });
  }
  if (kind & KEY_KIND_PROVIDER) push(start);
}

/** `[A-Za-z0-9_.\-]`: the characters of an assignment key. */
function isKeyChar(c: number): boolean {
  return isWordChar(c) || c === 0x2e || c === 0x2d;
}

function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}


/**
 * Literal alternatives of a tiny pattern language ("gh[pousr]_", "shp(at|ss|ca|pa)_"), each with the
 * offset of its first `_` or `-` (the anchor character).
 */
function expand(patterns: string[]): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const grow = (prefixes: string[], rest: string): string[] => {
    if (rest === '') return prefixes;
    const c = rest[0] as string;
    if (c === '[') {
      const close = rest.indexOf(']');
      const chars = rest.slice(1, close).split('');
      return grow(prefixes.flatMap((p) => chars.map((ch) => p + ch)), rest.slice(close + 1));
    }
    if (c === '(') {
      const close = rest.indexOf(')');
      const alts = rest.slice(1, close).split('|');
      return grow(prefixes.flatMap((p) => alts.map((a) => p + a)), rest.slice(close + 1));
    }
    return grow(prefixes.map((p) => p + c), rest.slice(1));
  };
  for (const pattern of patterns) {
    for (const literal of grow([''], pattern)) out.push([literal, literal.search(/[_-]/)]);
  }
  return out;
}
