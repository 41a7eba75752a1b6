import { foldLookalikes } from './confusables';
import { deobfuscateEmails } from './email-deobfuscate';
import { findEncodedSegments, type EncodedSegment } from './encoded-segments';
import { decodeHtmlEntities, decodePercentEscapes } from './inline-decode';
import { decodeInvisibleText, type HiddenPayload } from './invisible-text';
import { MappedTextBuilder, type MappedText, type Span } from './offset-map';
import { decodeRot13Lines } from './rot13';
import { normalizeUnicode } from './unicode';
import { deLeet, joinSeparatedLetters, stripMarkedWords } from './word-deobfuscate';

/**
 * The views of one text that the engine scans. Every detector, the deny list and the custom detectors
 * run on every view; each finding is mapped back to the original text through its view's map, and
 * findings of one type that overlap are merged (so the same e-mail seen in two views is one finding).
 *
 *   normalized  NFKC, invisible characters removed (always present; the allow list is checked on it).
 *   canonical   the normalized text with text hidden in invisible characters decoded in place (tag
 *               characters, variation-selector bytes: invisible-text.ts), HTML references and URL
 *               escapes decoded, confusables and other scripts' decimal digits folded, obfuscated e-mail
 *               addresses rewritten (then NFKC again when decoding produced new characters), and the
 *               word-level obfuscations undone where the text shows them (word-deobfuscate.ts: combining
 *               marks on every letter, letters spelled with separators, leetspeak). Present only when it
 *               differs from `normalized`.
 *   rot13       the lines of the canonical (else normalized) text that read as ROT13 of English,
 *               decoded (rot13.ts). Present only when there are some.
 *   decoded     the base64 / hex blobs found in the canonical (else normalized) text before its word-level
 *               edits, decoded, each again normalized and canonicalised, concatenated with a blank line
 *               between them. A finding inside a blob maps to the whole blob in the original. Blobs
 *               inside decoded blobs are decoded once more (MAX_DECODE_DEPTH: base64 of base64).
 *
 * Bounds (so decoding never multiplies work): at most MAX_DECODED_SEGMENTS blobs per text in total, and
 * the decoded text of each level is at most as long as the original (base64 shrinks by a quarter, hex
 * by half, so each level is shorter than the one it was decoded from and this only bites on
 * pathological input). Views other than `normalized` exist only when their cheap trigger is present; in
 * the worst case they total about four times the original's length (canonical + rot13 + two decoded
 * levels of at most 3/4 and 9/16).
 */

export type ViewKind = 'normalized' | 'canonical' | 'rot13' | 'decoded';

export interface TextView extends MappedText {
  readonly kind: ViewKind;
  /** 0 for the text itself, 1 for blobs decoded from it, 2 for blobs decoded from those. */
  readonly depth: number;
}

export const MAX_DECODE_DEPTH = 2;
export const MAX_DECODED_SEGMENTS = 256;
/** Between two decoded blobs in a decoded view, so no match runs from one blob into the next. */
const SEGMENT_SEPARATOR = '\n\n';

export interface ViewOptions {
  /** Decode base64 / hex blobs (default true). */
  decodeSegments?: boolean;
}

export interface ViewSet {
  views: TextView[];
  /** Text hidden in invisible characters of the original (decoded into the canonical view). */
  hidden: HiddenPayload[];
}

export function buildViews(original: string, options: ViewOptions = {}): TextView[] {
  return buildViewSet(original, options).views;
}

export function buildViewSet(original: string, options: ViewOptions = {}): ViewSet {
  const views: TextView[] = [];
  const invisible = decodeInvisibleText(original);
  let level = addTextViews(views, original, undefined, 0, invisible?.text);
  const rot13 = decodeRot13Lines((views[views.length - 1] as TextView).text, views[views.length - 1]);
  if (rot13) views.push({ ...asView(rot13), kind: 'rot13', depth: 1 });
  const hidden = invisible?.payloads ?? [];
  if (options.decodeSegments === false) return { views, hidden };
  const budget = { segments: MAX_DECODED_SEGMENTS, chars: original.length };
  for (let depth = 1; depth <= MAX_DECODE_DEPTH && budget.segments > 0; depth++) {
    budget.chars = original.length; // per level: each level is shorter than the one it is decoded from
    const decoded = decodeLevel(level, budget);
    if (!decoded) break;
    level = addTextViews(views, decoded.text, decoded, depth);
  }
  return { views, hidden };
}

/**
 * The normalized and (if different) canonical views of `source`; returns the text to search for blobs
 * (the canonical text before its word-level edits, which could break a blob). `revealed` is `source`
 * with its invisible payloads decoded, when it has some.
 */
function addTextViews(
  views: TextView[],
  source: string,
  base: MappedText | undefined,
  depth: number,
  revealed?: MappedText,
): MappedText {
  const normalized = normalizeUnicode(source, base);
  const inline = canonicalizeInline(revealed ? normalizeUnicode(revealed.text, revealed) : normalized);
  const canonical = deobfuscateWords(inline);
  if (depth === 0 || canonical === normalized) {
    views.push({ ...asView(normalized), kind: depth === 0 ? 'normalized' : 'decoded', depth });
  } else {
    // Decoded blobs get one view only: the canonical one (the look-alike form matters little there).
    views.push({ ...asView(canonical), kind: 'decoded', depth });
    return inline;
  }
  if (canonical !== normalized) views.push({ ...asView(canonical), kind: 'canonical', depth });
  return inline;
}

/**
 * The text of the view `view` was made from by local edits, when it was (the canonical view: its
 * normalised view); window-based scanning aligns its windows with it (classifiers/windows.ts).
 */
export function alignmentBase(view: TextView, views: readonly TextView[]): string | undefined {
  return view.kind === 'canonical' ? views[0]?.text : undefined;
}

/** The canonical form of a normalized text: inline decoding, folding, e-mails, then the word-level edits. */
export function canonicalize(normalized: MappedText): MappedText {
  return deobfuscateWords(canonicalizeInline(normalized));
}

/** Marks on every letter, letters spelled with separators, leetspeak (word-deobfuscate.ts). */
function deobfuscateWords(text: MappedText): MappedText {
  let current = stripMarkedWords(text.text, text);
  current = joinSeparatedLetters(current.text, current);
  return deLeet(current.text, current);
}

/** Decoding of inline encodings, folding and e-mail rewriting, on top of a normalized text. */
function canonicalizeInline(normalized: MappedText): MappedText {
  let current = decodeHtmlEntities(normalized.text, normalized);
  current = decodePercentEscapes(current.text, current);
  // Decoded references may have produced full-width letters or invisible characters: normalize again.
  if (current !== normalized) current = normalizeUnicode(current.text, current);
  current = foldLookalikes(current.text, current); // confusable letters and other scripts' digits
  current = deobfuscateEmails(current.text, current);
  return current;
}

function asView(m: MappedText): MappedText {
  return { text: m.text, identity: m.identity, toOriginal: m.toOriginal };
}

interface Budget {
  segments: number;
  chars: number;
}

/** All blobs of `parent` decoded and concatenated, each mapping to its whole blob in the original. */
function decodeLevel(parent: MappedText, budget: Budget): MappedText | undefined {
  const segments = findEncodedSegments(parent.text, { maxSegments: budget.segments, maxDecodedChars: budget.chars });
  if (segments.length === 0) return undefined;
  const builder = new MappedTextBuilder(parent.text);
  segments.forEach((segment, i) => {
    const previous = segments[i - 1];
    if (previous && !continuesOnNextLine(parent.text, previous, segment)) builder.insert(previous.end, SEGMENT_SEPARATOR);
    builder.replace(segment.start, segment.end, segment.decoded);
    budget.segments -= 1;
    budget.chars -= segment.decoded.length;
  });
  return builder.build(parent);
}

/**
 * Base64 wrapped over several lines (MIME, PEM: 64 or 76 characters a line) is one blob: a full line
 * (>= MIN_WRAPPED_LINE characters, a multiple of 4, no padding) followed by a line break and a base64
 * line no longer than it continues it, so their decoded texts are joined without a separator (each
 * line still maps to itself).
 */
const MIN_WRAPPED_LINE = 40;

function continuesOnNextLine(text: string, previous: EncodedSegment, next: EncodedSegment): boolean {
  if (previous.kind !== 'base64' || next.kind !== 'base64') return false;
  const length = previous.end - previous.start;
  if (length < MIN_WRAPPED_LINE || length % 4 !== 0 || text.charCodeAt(previous.end - 1) === 0x3d) return false;
  if (next.end - next.start > length) return false; // wrapped lines are equally long, the last one shorter
  const gap = next.start - previous.end;
  return (gap === 1 && text.charCodeAt(previous.end) === 0x0a) || (gap === 2 && text.startsWith('\r\n', previous.end));
}

export type { HiddenPayload, MappedText, Span };
