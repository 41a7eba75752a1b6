import type { Core } from './address-core';

/**
 * Address cores outside the street-type patterns of address-core.ts:
 *
 * Japan: "〒150-0002 東京都渋谷区渋谷2丁目21番1号", "大阪府大阪市北区梅田3丁目1番3号". Anchored on the postcode
 * after "〒" (the postal mark: the digits are a postcode whatever follows), or on a block number
 * followed by 丁目 / 番 / 番地 / 号 whose Han run before it names a prefecture, city, ward, town or
 * village (都 道 府 県 市 区 町 村 郡). The span runs over the Han / katakana / digit characters of the
 * address and ends at its last number (or 号 / 番地 / 丁目), so "…1号です" stops before "です".
 *
 * Postcode-anchored street lines: a house number with 1–4 capitalised words (either order: "27 Kingsley
 * Road", "Poblado Olivia, 16", "Anoukplantsoen 736b") that is followed by a postcode and a city
 * (", 10969 Berlin", ", Brighton BN1 6JD", ", Austin, TX 78745") is an address even when its street
 * type is not in the lists; address-detector.ts checks the tail (this file only proposes the line).
 */

const POSTAL_MARK = 0x3012; // 〒
const JP_POSTCODE = /[0-9]{3}-[0-9]{4}(?![0-9])/y;
const JP_BLOCK = /[0-9]{1,4}(?:丁目|番地|番|号)/y;
const JP_ADMIN = /[都道府県市区町村郡]/;
const isHan = (c: number) => (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf);
const isKatakana = (c: number) => (c >= 0x30a0 && c <= 0x30ff) || c === 0x30fc;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** Characters an address line of Japan is written with: Han, katakana, digits, hyphens, 丁目番号 (Han too). */
const inJpAddress = (c: number) => isHan(c) || isKatakana(c) || isDigit(c) || c === 0x2d || c === 0x2212 || c === 0xff0d;

/** The end of a Japanese address body starting at `from`: its last digit run or 丁目/番/番地/号, at most 48 characters. */
function jpBodyEnd(text: string, from: number): number {
  let i = from;
  let lastGood = -1;
  while (i < text.length && i - from < 48 && inJpAddress(text.charCodeAt(i))) {
    const c = text.charCodeAt(i);
    if (isDigit(c) || '丁目番地号'.includes(text.charAt(i))) lastGood = i + 1;
    i++;
  }
  return lastGood;
}

export function japaneseCore(text: string, ds: number, de: number): Core | null {
  const before = text.charCodeAt(ds - 1);
  const mark = before === POSTAL_MARK ? ds - 1 : (before === 0x20 || before === 0x3000) && text.charCodeAt(ds - 2) === POSTAL_MARK ? ds - 2 : -1;
  if (mark >= 0) {
    JP_POSTCODE.lastIndex = ds;
    if (!JP_POSTCODE.test(text)) return null;
    let body = JP_POSTCODE.lastIndex;
    while (text.charCodeAt(body) === 0x20 || text.charCodeAt(body) === 0x3000) body++;
    const end = jpBodyEnd(text, body);
    const admin = end > body && JP_ADMIN.test(text.slice(body, end));
    return { kind: 'jp', start: mark, end: admin ? end : JP_POSTCODE.lastIndex, base: admin ? 0.9 : 0.8 };
  }
  JP_BLOCK.lastIndex = ds;
  if (de - ds > 4 || !JP_BLOCK.test(text)) return null;
  // Walk back over the Han / katakana name of the place (at most 24 characters).
  let start = ds;
  while (start > 0 && ds - start < 24 && (isHan(text.charCodeAt(start - 1)) || isKatakana(text.charCodeAt(start - 1)))) start--;
  if (!JP_ADMIN.test(text.slice(start, ds))) return null;
  const end = jpBodyEnd(text, ds);
  return end > ds ? { kind: 'jp', start, end, base: 0.75 } : null;
}

const NUMBER_ADDITION = /[ -](?:I{1,3}|IV|hs|bis|ter)(?![\p{L}\p{N}])/uy;
const SIN_NUMERO_BEFORE = /[ \t](s\/n\.?)[ \t]*,[ \t]*$/;
const CAP_WORD = /^\p{Lu}[\p{L}'’.-]*$/u;
const PARTICLES = new Set(['de', 'del', 'della', 'di', 'da', 'do', 'dos', 'du', 'des', 'la', 'le', 'van', 'der', 'den', 'von', 'am', 'an', 'im', "l'", "d'", 'y']);
const WORD_CHAR = /[\p{L}'’.-]/u;

interface Span {
  start: number;
  end: number;
}

/** Up to 4 words before `to` (same line), nearest first. */
function wordsBack(text: string, to: number): Span[] {
  const out: Span[] = [];
  let i = to;
  while (out.length < 4) {
    const gapEnd = i;
    while (i > 0 && text[i - 1] === ' ') i--;
    if (out.length > 0 && (i === gapEnd || gapEnd - i > 2)) break;
    const end = i;
    while (i > 0 && WORD_CHAR.test(text.charAt(i - 1)) && end - i < 30) i--;
    if (i === end) break;
    out.push({ start: i, end });
  }
  return out;
}

/** Up to 4 words after `from` (same line). */
function wordsForward(text: string, from: number): Span[] {
  const out: Span[] = [];
  let i = from;
  while (out.length < 4) {
    const gap = i;
    while (i < text.length && text[i] === ' ') i++;
    if (i === gap || i - gap > 2) break;
    const start = i;
    while (i < text.length && WORD_CHAR.test(text.charAt(i)) && i - start < 30) i++;
    if (i === start) break;
    out.push({ start, end: i });
  }
  return out;
}

/**
 * A street line around house number [ds, de): capitalised words before it ("Rotonda Dorotea 49",
 * "van der Meerdijk 8") or after it ("519 Monroe Lea"). Returns every candidate line end, the caller
 * keeps one whose tail holds a postcode and a city. The words must start with a capital (particles
 * excepted) and the line's first word must be capitalised or a particle.
 */
export function streetLineCandidates(text: string, ds: number, de: number): Core[] {
  const out: Core[] = [];
  let numEnd = de;
  if (/\p{L}/u.test(text.charAt(de)) && !WORD_CHAR.test(text.charAt(de + 1))) numEnd = de + 1; // 736b, 221B
  else {
    NUMBER_ADDITION.lastIndex = de;
    if (NUMBER_ADDITION.test(text)) numEnd = NUMBER_ADDITION.lastIndex; // "481 I" (Dutch floor)
  }
  // Spanish "sin número": "Paseo Miguel Alejandro s/n., 97240 El Ejido" is anchored on the postcode.
  const sn = SIN_NUMERO_BEFORE.exec(text.slice(Math.max(0, ds - 8), ds));
  if (sn) {
    const lineEnd = ds - sn[0].length + sn[0].indexOf('s') + (sn[1] ?? '').length;
    const names = takeNames(text, wordsBack(text, ds - sn[0].length));
    return names ? [{ kind: 'eu', start: names.start, end: lineEnd, base: 0.4 }] : [];
  }
  // Name first: "Travesía Daniela, 9", "Contrada Francesco 732".
  let to = ds;
  while (to > 0 && text[to - 1] === ' ') to--;
  if (text[to - 1] === ',') to--;
  if (to < ds) {
    const back = wordsBack(text, to);
    const names = takeNames(text, back);
    if (names) out.push({ kind: 'eu', start: names.start, end: numEnd, base: 0.4 });
  }
  // Number first: "519 Monroe Lea", "59 Voie de l'Abbaye".
  if (text[numEnd] === ' ') {
    const words = wordsForward(text, numEnd);
    let last = -1;
    for (const w of words) {
      const word = text.slice(w.start, w.end);
      if (CALENDAR_WORDS.has(word.toLowerCase())) return out;
      if (CAP_WORD.test(word)) last = w.end;
      else if (!PARTICLES.has(word.toLowerCase()) && !/^[dl]['’]\p{Lu}/u.test(word)) break;
    }
    if (last > 0 && CAP_WORD.test(text.slice(words[0]?.start ?? 0, words[0]?.end ?? 0))) out.push({ kind: 'us', start: ds, end: last, base: 0.4 });
  }
  return out;
}

/**
 * Months and weekdays (en, de, fr, es, it, nl): "January 1, 1970 UTC" is a date followed by a year, not
 * a street line followed by a postcode.
 */
const CALENDAR_WORDS = new Set(
  ('january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec ' +
    'monday tuesday wednesday thursday friday saturday sunday januar februar märz mai juni juli oktober dezember montag dienstag mittwoch ' +
    'donnerstag freitag samstag sonntag janvier février mars avril juin juillet août septembre octobre novembre décembre lundi mardi ' +
    'mercredi jeudi vendredi samedi dimanche enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre ' +
    'lunes martes miércoles jueves viernes sábado domingo gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre ' +
    'lunedì martedì mercoledì giovedì venerdì sabato domenica januari februari maart mei augustus maandag dinsdag woensdag donderdag ' +
    'vrijdag zaterdag zondag version chapter section page step figure table part release').split(' '),
);

/** The span of 1–4 words nearest first that name a street (the last, i.e. farthest, capitalised). */
function takeNames(text: string, back: readonly Span[]): Span | null {
  let start = -1;
  for (const w of back) {
    const word = text.slice(w.start, w.end);
    if (CALENDAR_WORDS.has(word.toLowerCase())) return null;
    if (CAP_WORD.test(word)) start = w.start;
    else if (PARTICLES.has(word.toLowerCase()) && start >= 0) start = w.start;
    else break;
  }
  const nearest = back[0];
  return start >= 0 && nearest ? { start, end: nearest.end } : null;
}
