import { MappedTextBuilder, type MappedText } from './offset-map';

/**
 * Text written in invisible characters ("ASCII smuggling"), decoded so it is scanned like visible text:
 *
 *   - Unicode tag characters U+E0020–U+E007E are ASCII shifted by 0xE0000: each run of tag characters
 *     decodes to the ASCII it shifts (U+E0001 LANGUAGE TAG and U+E007F CANCEL TAG decode to nothing).
 *     An emoji tag sequence (U+1F3F4 then tag letters / digits then U+E007F: the flags of England,
 *     Scotland, Wales) is a legitimate use and is not a payload.
 *   - Variation-selector byte smuggling: a run of at least two variation selectors (a legitimate text
 *     has at most one after a character) encodes one byte per selector, VS1–VS16 (U+FE00–U+FE0F) → 0–15,
 *     VS17–VS256 (U+E0100–U+E01EF) → 16–255; the bytes are decoded as UTF-8 (a run that is not valid
 *     UTF-8, or decodes to nothing visible, such as a doubled emoji selector, hides nothing).
 *
 * The result replaces each run by its decoded text between two spaces (so it never glues to the words
 * around it), mapping as a whole to the run in the source; the rest of the source is kept. Everything
 * else (NFKC, removal of the other invisible characters) is left to normalizeUnicode, which runs on it.
 */

export interface HiddenPayload {
  kind: 'tag' | 'variation_selector';
  /** Span of the run in the source (UTF-16 offsets). */
  start: number;
  end: number;
  decoded: string;
}

export interface InvisibleDecoding {
  text: MappedText;
  payloads: HiddenPayload[];
}

/** Decoded payloads of at least this many characters (trimmed, with a letter) are a prompt_attack at L2. */
export const MIN_HIDDEN_PAYLOAD_CHARS = 8;

/** Cheap trigger: a high surrogate of U+E0000–U+E01FF, or a BMP variation selector. */
const CANDIDATE = /[\uDB40\uFE00-\uFE0F]/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const BLACK_FLAG = 0x1f3f4;
/** A decoded payload must have something visible. */
const VISIBLE = /[^\p{Cc}\p{Cf}\p{Z}]/u;

const isTag = (cp: number) => cp >= 0xe0000 && cp <= 0xe007f;
function selectorByte(cp: number): number | undefined {
  if (cp >= 0xfe00 && cp <= 0xfe0f) return cp - 0xfe00;
  if (cp >= 0xe0100 && cp <= 0xe01ef) return cp - 0xe0100 + 16;
  return undefined;
}

/** The source with its invisible payloads decoded in place, or undefined when it has none. */
export function decodeInvisibleText(source: string, base?: MappedText): InvisibleDecoding | undefined {
  if (!CANDIDATE.test(source)) return undefined;
  const payloads: HiddenPayload[] = [];
  let i = 0;
  while (i < source.length) {
    const cp = source.codePointAt(i) as number;
    const width = cp > 0xffff ? 2 : 1;
    const run = isTag(cp) ? tagRun(source, i) : selectorByte(cp) !== undefined ? selectorRun(source, i) : undefined;
    if (!run) {
      i += width;
      continue;
    }
    if (run.decoded !== undefined) payloads.push({ kind: run.kind, start: i, end: run.end, decoded: run.decoded });
    i = run.end;
  }
  if (payloads.length === 0) return undefined;
  const builder = new MappedTextBuilder(source);
  let cursor = 0;
  for (const p of payloads) {
    builder.keep(cursor, p.start);
    builder.replace(p.start, p.end, ` ${p.decoded} `);
    cursor = p.end;
  }
  builder.keep(cursor, source.length);
  return { text: builder.build(base), payloads };
}

/** True when the payload is long enough, and text enough, to be reported at L2 (else at L4). */
export function isSubstantialPayload(p: HiddenPayload): boolean {
  const trimmed = p.decoded.trim();
  return trimmed.length >= MIN_HIDDEN_PAYLOAD_CHARS && /\p{L}/u.test(trimmed);
}

interface Run {
  kind: HiddenPayload['kind'];
  end: number;
  /** Undefined when the run hides nothing (an emoji tag sequence, a lone selector, invalid bytes). */
  decoded: string | undefined;
}

function tagRun(source: string, start: number): Run {
  let end = start;
  let decoded = '';
  let cp = source.codePointAt(end) as number;
  while (end < source.length && isTag(cp)) {
    if (cp >= 0xe0020 && cp <= 0xe007e) decoded += String.fromCharCode(cp - 0xe0000);
    end += 2;
    cp = source.codePointAt(end) ?? 0;
  }
  if (!VISIBLE.test(decoded)) return { kind: 'tag', end, decoded: undefined };
  const flag = start >= 2 && source.codePointAt(start - 2) === BLACK_FLAG && /^[0-9a-z]{1,8}$/.test(decoded);
  return { kind: 'tag', end, decoded: flag || decoded.length === 0 ? undefined : decoded };
}

function selectorRun(source: string, start: number): Run {
  const bytes: number[] = [];
  let end = start;
  for (;;) {
    const cp = source.codePointAt(end);
    const byte = cp === undefined ? undefined : selectorByte(cp);
    if (byte === undefined) break;
    bytes.push(byte);
    end += (cp as number) > 0xffff ? 2 : 1;
  }
  if (bytes.length < 2) return { kind: 'variation_selector', end, decoded: undefined };
  let decoded: string | undefined;
  try {
    decoded = UTF8.decode(Uint8Array.from(bytes));
  } catch {
    decoded = undefined;
  }
  // Only control characters (a doubled emoji selector "❤️️" is bytes 15, 15): nothing hidden.
  return { kind: 'variation_selector', end, decoded: decoded !== undefined && VISIBLE.test(decoded) ? decoded : undefined };
}
