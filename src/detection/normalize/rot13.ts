import { MappedTextBuilder, type MappedText } from './offset-map';

/**
 * ROT13 of English, decoded into a view of its own (the `rot13` view). Cheap trigger: a line is ROT13
 * when it holds at least MIN_ROT13_WORDS distinct words from ROT13_WORDS, the ROT13 forms of common
 * English words and of the words attacks use ("gur" = "the", "naq" = "and", "vtaber" = "ignore"), none
 * of which is an English word itself. Only those lines are rotated; the view is their concatenation (a
 * blank line between two), each letter mapping to its own letter in the original, so a text with one
 * ROT13 sentence costs one extra sentence of scanning, and a text without any costs nothing.
 */

export const MIN_ROT13_WORDS = 2;

export const ROT13_WORDS: ReadonlySet<string> = new Set([
  // the, and, you, your, that, with, this, was, not, but, have, from, will, they ("are" and "what" are
  // left out: their ROT13 forms "ner" and "jung" are an NLP acronym and a name)
  'gur', 'naq', 'lbh', 'lbhe', 'gung', 'jvgu', 'guvf', 'jnf', 'abg', 'ohg', 'unir', 'sebz', 'jvyy', 'gurl',
  // ignore, all, previous, instructions, reveal, system, prompt, disregard, rules, forget, above, now
  'vtaber', 'nyy', 'cerivbhf', 'vafgehpgvbaf', 'erirny', 'flfgrz', 'cebzcg', 'qvfertneq', 'ehyrf', 'sbetrg', 'nobir', 'abj',
]);

const LINE = /[^\n]+/g;
const WORD = /[A-Za-z]+/g;
/** Lines with none of the words cannot qualify: skip them without tokenising. */
const QUICK = new RegExp(`\\b(?:${[...ROT13_WORDS].join('|')})\\b`, 'i');

export function rot13(text: string): string {
  return text.replace(/[A-Za-z]/g, (c) => {
    const code = c.charCodeAt(0);
    const a = code >= 97 ? 97 : 65;
    return String.fromCharCode(((code - a + 13) % 26) + a);
  });
}

function looksLikeRot13(line: string): boolean {
  if (!QUICK.test(line)) return false;
  const seen = new Set<string>();
  WORD.lastIndex = 0;
  for (let m = WORD.exec(line); m; m = WORD.exec(line)) {
    const w = m[0].toLowerCase();
    if (ROT13_WORDS.has(w)) seen.add(w);
    if (seen.size >= MIN_ROT13_WORDS) break;
  }
  WORD.lastIndex = 0;
  return seen.size >= MIN_ROT13_WORDS;
}

/** The ROT13-decoded lines of `source` that look like ROT13 of English, or undefined when none does. */
export function decodeRot13Lines(source: string, base?: MappedText): MappedText | undefined {
  if (!QUICK.test(source)) return undefined;
  const builder = new MappedTextBuilder(source);
  let found = 0;
  let previousEnd = 0;
  LINE.lastIndex = 0;
  for (let m = LINE.exec(source); m; m = LINE.exec(source)) {
    if (!looksLikeRot13(m[0])) continue;
    if (found > 0) builder.insert(previousEnd, '\n\n');
    builder.replace(m.index, m.index + m[0].length, rot13(m[0]), true);
    previousEnd = m.index + m[0].length;
    found++;
  }
  LINE.lastIndex = 0;
  return found === 0 ? undefined : builder.build(base);
}
