import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens as libraryCount } from 'gpt-tokenizer';
import libraryRanks from 'gpt-tokenizer/cjs/bpeRanks/o200k_base';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/cjs/encodingParams/constants';
import { CompactO200k, o200kCounter, parseTiktoken } from '../../../src/shared/o200k-compact';

/**
 * The compact o200k table must give gpt-tokenizer's counts exactly: the audit event's token count and
 * the max_input_tokens limit are documented as o200k_base counts.
 */

const ROOT = join(__dirname, '..', '..', '..');
const LIBRARY_OPTIONS = { disallowedSpecial: new Set<string>() };
const count = (text: string) => o200kCounter().countTokens(text);

/** A deterministic mix of ASCII, Latin, CJK, emoji, whitespace, U+FEFF and lone surrogates. */
function mixedTexts(n: number): string[] {
  let seed = 7;
  const rnd = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    let s = '';
    const len = 1 + Math.floor(rnd() * 80);
    for (let j = 0; j < len; j++) {
      const r = rnd();
      if (r < 0.5) s += String.fromCharCode(32 + Math.floor(rnd() * 95));
      else if (r < 0.7) s += String.fromCharCode(0x80 + Math.floor(rnd() * 0x700));
      else if (r < 0.8) s += String.fromCharCode(0x4e00 + Math.floor(rnd() * 500));
      else if (r < 0.85) s += '\uFEFF';
      else if (r < 0.9) s += String.fromCharCode(0xd800 + Math.floor(rnd() * 0x800));
      else if (r < 0.95) s += String.fromCodePoint(0x1f600 + Math.floor(rnd() * 80));
      else s += ' \n\t'[Math.floor(rnd() * 3)] as string;
    }
    out.push(s);
  }
  return out;
}

describe('compact o200k_base counter', () => {
  it('holds exactly the library ranks: every rank has the same bytes', () => {
    const table = parseTiktoken(readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken')));
    const ranks = libraryRanks as unknown as Array<string | number[] | undefined>;
    expect(table.offsets.length - 1).toBe(ranks.length);
    const encoder = new TextEncoder();
    let mismatches = 0;
    for (let r = 0; r < ranks.length; r++) {
      const v = ranks[r];
      if (v === undefined) continue;
      const want = typeof v === 'string' ? encoder.encode(v) : Uint8Array.from(v);
      const got = table.bytes.subarray(table.offsets[r], table.offsets[r + 1]);
      if (want.length !== got.length || want.some((b, i) => b !== got[i])) mismatches++;
    }
    expect(mismatches).toBe(0);
  });

  it('counts like gpt-tokenizer on prose, code and the README', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const source = readFileSync(join(ROOT, 'src', 'shared', 'o200k-compact.ts'), 'utf8');
    for (const text of [readme, source, 'Hello, world!', '', ' ', '<|endoftext|> and <|im_start|>system']) {
      expect(count(text)).toBe(libraryCount(text, LIBRARY_OPTIONS));
    }
  });

  it('counts like gpt-tokenizer on mixed scripts, emoji, byte-order marks and lone surrogates', () => {
    const texts = [
      '\uFEFFusing namespace \uFEFF\uFEFFfoo',
      'a\uD800b \uDC00x 😀😀 éàü ñ 中文字符 العربية हिन्दी',
      '\uFEFF',
      '\uD83D',
      ...mixedTexts(2000),
    ];
    const differing = texts.filter((t) => count(t) !== libraryCount(t, LIBRARY_OPTIONS));
    expect(differing).toEqual([]);
  });

  it("the library's split regex matches back to back over any text (what the sticky piece scan relies on)", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const gaps: string[] = [];
    for (const text of [readme, 'a\uD800b \uDC00x 😀😀 éàü\r\n\r\n  \t x', '\uDFFF\uD800', ...mixedTexts(2000)]) {
      let end = 0;
      for (const m of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
        if (m.index !== end || m[0].length === 0) gaps.push(JSON.stringify(text.slice(end, m.index + 1)));
        end = m.index + m[0].length;
      }
      if (end !== text.length) gaps.push(JSON.stringify(text.slice(end)));
    }
    expect(gaps).toEqual([]);
  });

  it('gives the same count with its piece cache full, tiny or cold', () => {
    const table = parseTiktoken(readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken')));
    const tiny = new CompactO200k(table, 1);
    const texts = mixedTexts(300);
    const first = texts.map((t) => tiny.countTokens(t));
    const again = texts.map((t) => tiny.countTokens(t));
    expect(again).toEqual(first);
    expect(first).toEqual(texts.map((t) => libraryCount(t, LIBRARY_OPTIONS)));
  });
});
