import * as cl100k from 'gpt-tokenizer/cjs/encoding/cl100k_base';

/**
 * Generated token-soup suffixes in the manner of optimised adversarial suffixes (GCG, AutoPrompt and
 * their random-search variants): 20–40 "tokens" drawn from a real BPE vocabulary (cl100k_base, the
 * printable-ASCII entries), in several styles so that the signal does not fit one of them. Deterministic
 * for a given random source.
 */

export const SUFFIX_STYLES = ['bpe-uniform', 'markup', 'glued', 'word-salad', 'wordy', 'bpe-words'] as const;
export type SuffixStyle = (typeof SUFFIX_STYLES)[number];

interface Vocabulary {
  all: string[];
  /** " word" tokens: a space then ≥ 3 letters. */
  words: string[];
  /** the frequent ones (low BPE ranks: merged early, so common in the tokenizer's training text). */
  common: string[];
  /** letter-only pieces without a leading space. */
  pieces: string[];
  /** tokens with no letter or digit: punctuation, brackets, markup. */
  punct: string[];
  /** tokens mixing letters with punctuation: ".cont", "(context", "_map". */
  mixed: string[];
}

let vocabulary: Vocabulary | undefined;

function vocab(): Vocabulary {
  if (vocabulary) return vocabulary;
  const v: Vocabulary = { all: [], words: [], common: [], pieces: [], punct: [], mixed: [] };
  for (let id = 0; id < 100256; id++) {
    const t = cl100k.decode([id]);
    if (!/^[\x20-\x7e]+$/.test(t) || t.trim() === '' || t.length > 14) continue;
    v.all.push(t);
    if (/^ [A-Za-z]{2,}$/.test(t) && id < 20000) v.common.push(t);
    if (/^ [A-Za-z]{3,}$/.test(t)) v.words.push(t);
    else if (/^[A-Za-z]+$/.test(t)) v.pieces.push(t);
    else if (!/[A-Za-z0-9]/.test(t)) v.punct.push(t);
    else if (/[A-Za-z]/.test(t) && /[^A-Za-z0-9 ]/.test(t)) v.mixed.push(t);
  }
  vocabulary = v;
  return v;
}

type Rand = () => number;
const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

function recase(rand: Rand, t: string): string {
  const r = rand();
  if (r < 0.15) return t.toUpperCase();
  if (r < 0.4) return t.replace(/[a-z]/, (c) => c.toUpperCase());
  return t;
}

/** A few markup fragments common in published optimised suffixes' style (not copied from any). */
const MARKUP = ['](', '**', '\\!--', '{%', '%}', '};', '"\\', ':)', '->', '({', '[@', '={', '</', '/>', '\\(', '$$', '|--', '`', '##', '=>', '?"', '.\\', '^{', '}}', '<!--'];

function token(style: SuffixStyle, rand: Rand): string {
  const v = vocab();
  const r = rand();
  switch (style) {
    case 'bpe-uniform':
      return pick(rand, v.all);
    case 'bpe-words':
      if (r < 0.45) return recase(rand, pick(rand, v.words));
      if (r < 0.65) return recase(rand, pick(rand, v.pieces));
      if (r < 0.8) return rand() < 0.5 ? pick(rand, v.punct) : pick(rand, MARKUP);
      if (r < 0.9) return pick(rand, v.mixed);
      return pick(rand, v.all);
    case 'markup':
      if (r < 0.3) return rand() < 0.5 ? pick(rand, v.punct) : (rand() < 0.5 ? ' ' : '') + pick(rand, MARKUP);
      if (r < 0.55) return pick(rand, v.mixed);
      if (r < 0.8) return pick(rand, v.pieces) + (rand() < 0.5 ? recase(rand, pick(rand, v.pieces)) : '');
      return pick(rand, v.words);
    case 'glued': {
      const parts = 2 + Math.floor(rand() * 3);
      let s = ' ';
      for (let i = 0; i < parts; i++) s += recase(rand, pick(rand, rand() < 0.7 ? v.pieces : v.words).trim());
      return rand() < 0.2 ? s + pick(rand, v.punct) : s;
    }
    case 'wordy':
      // mostly frequent words, some glued to the next one or to markup ("similarlyNow", "giving**ONE")
      if (r < 0.6) return recase(rand, pick(rand, v.common));
      if (r < 0.75) return recase(rand, pick(rand, v.common).trim());
      if (r < 0.9) return rand() < 0.5 ? pick(rand, v.punct) : pick(rand, MARKUP);
      return pick(rand, v.all);
    case 'word-salad':
      if (r < 0.85) return rand() < 0.3 ? recase(rand, pick(rand, v.words)) : pick(rand, v.words);
      return pick(rand, v.punct);
  }
}

/** One suffix of 20–40 tokens in `style`. */
export function generateSuffix(style: SuffixStyle, rand: Rand): string {
  const k = 20 + Math.floor(rand() * 21);
  let s = '';
  for (let i = 0; i < k; i++) s += token(style, rand);
  return s.trim();
}

/** The request with a suffix appended the way attacks do: after a space, rarely a newline. */
export function withSuffix(request: string, suffix: string, rand: Rand): string {
  return `${request.trimEnd()}${rand() < 0.85 ? ' ' : '\n'}${suffix}`;
}
