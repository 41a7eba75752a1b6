import { identityText, MappedTextBuilder, type MappedText } from './offset-map';
import { isAscii } from './unicode';

/**
 * Look-alike folding, for matching (the canonical view).
 *
 * Confusables: Cyrillic, Greek and a few other letters that render like Latin letters are replaced by
 * the Latin letter they imitate ("jane@аcme.com" with a Cyrillic "а" reads as, and is
 * matched as, "jane@acme.com"). A subset of Unicode's confusables.txt (UTS #39) restricted to
 * single-letter look-alikes of ASCII letters that survive NFKC (NFKC already handles full-width and
 * mathematical letters). Every entry is one UTF-16 unit to one, so the map stays linear.
 *
 * Folding is for matching only: the engine scans the folded text as an extra view beside the unfolded
 * one, so a detector that wants to see the look-alike itself (e.g. an IDN spoof of a known domain)
 * still can.
 */
export const CONFUSABLES: Readonly<Record<string, string>> = Object.freeze({
  // Cyrillic lower case
  а: 'a', е: 'e', һ: 'h', і: 'i', ј: 'j', о: 'o', р: 'p', с: 'c', у: 'y', х: 'x', ѕ: 's', ԁ: 'd',
  ԛ: 'q', ԝ: 'w', ӏ: 'l', ү: 'y', ѵ: 'v',
  // Cyrillic upper case
  А: 'A', В: 'B', Е: 'E', К: 'K', М: 'M', Н: 'H', О: 'O', Р: 'P', С: 'C', Т: 'T', У: 'Y', Х: 'X',
  І: 'I', Ј: 'J', Ѕ: 'S', Ԁ: 'D', Ԛ: 'Q', Ԝ: 'W', Ү: 'Y', Ӏ: 'I', Ѵ: 'V',
  // Greek upper case
  Α: 'A', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', Κ: 'K', Μ: 'M', Ν: 'N', Ο: 'O', Ρ: 'P', Τ: 'T',
  Υ: 'Y', Χ: 'X', Ϳ: 'J',
  // Greek lower case (the lunate sigma ϲ, a classic "c" look-alike, is ς after NFKC)
  α: 'a', ο: 'o', ν: 'v', ι: 'i', κ: 'k', ρ: 'p', υ: 'u', χ: 'x', ς: 'c', ϳ: 'j', ε: 'e',
  // Latin letters that imitate other Latin letters, Armenian look-alikes
  ı: 'i', ȷ: 'j', ɑ: 'a', ɡ: 'g', ɩ: 'i', ʋ: 'u', օ: 'o', ս: 'u', ց: 'g', հ: 'h', ո: 'n',
});

const TABLE = new Map<number, string>(Object.entries(CONFUSABLES).map(([k, v]) => [k.charCodeAt(0), v]));

/** Non-ASCII UTF-16 units (the candidates). Without the `u` flag: several times faster on long texts. */
const NON_ASCII_UNIT = /[^\x00-\x7f]/g;

/**
 * Decimal digits of every script (Arabic-Indic ٤, Devanagari ४, Bengali ৪, Thai ๔ ...; category Nd) folded
 * to ASCII digits, so a card or SSN number cannot hide in another script's digits. NFKC already folds
 * full-width and mathematical digits but leaves these alone. Nd digits come in contiguous runs of ten
 * (or multiples of ten), starting at zero, so a digit's value is its distance from the run's start mod 10.
 */
const DIGIT = /^\p{Nd}$/u;
const DIGIT_VALUES = new Map<number, string | null>();

/** The ASCII digit of a non-ASCII code point, or null when it is not a decimal digit (cached). */
function digitValue(cp: number): string | null {
  const cached = DIGIT_VALUES.get(cp);
  if (cached !== undefined) return cached;
  let value: string | null = null;
  if (DIGIT.test(String.fromCodePoint(cp))) {
    let start = cp;
    while (cp - start < 60 && DIGIT.test(String.fromCodePoint(start - 1))) start--;
    value = String((cp - start) % 10);
  }
  if (DIGIT_VALUES.size < 65_536) DIGIT_VALUES.set(cp, value);
  return value;
}

/** Folds every confusable of `source` to its Latin letter, mapped back through `base`. */
export function foldConfusables(source: string, base?: MappedText): MappedText {
  return foldNonAscii(source, base, { confusables: true, digits: false });
}

/** Folds non-ASCII decimal digits to ASCII, mapped back through `base`. */
export function foldDigits(source: string, base?: MappedText): MappedText {
  return foldNonAscii(source, base, { confusables: false, digits: true });
}

/** Both folds in one pass (what the canonical view uses). */
export function foldLookalikes(source: string, base?: MappedText): MappedText {
  return foldNonAscii(source, base, { confusables: true, digits: true });
}

/**
 * One pass over the non-ASCII characters only (a fast regex without the `u` flag finds them; most texts
 * have none or few), looking each up in the confusable table and the digit table.
 */
function foldNonAscii(source: string, base: MappedText | undefined, which: { confusables: boolean; digits: boolean }): MappedText {
  if (isAscii(source)) return base ?? identityText(source);
  let builder: MappedTextBuilder | undefined;
  let cursor = 0;
  NON_ASCII_UNIT.lastIndex = 0;
  for (let m = NON_ASCII_UNIT.exec(source); m; m = NON_ASCII_UNIT.exec(source)) {
    const cp = source.codePointAt(m.index) as number;
    const units = cp > 0xffff ? 2 : 1;
    NON_ASCII_UNIT.lastIndex = m.index + units; // never stop on the low half of a pair
    const value = (which.confusables ? TABLE.get(cp) : undefined) ?? (which.digits ? digitValue(cp) : null);
    if (value === undefined || value === null) continue;
    builder ??= new MappedTextBuilder(source);
    builder.keep(cursor, m.index);
    builder.replace(m.index, m.index + units, value, true);
    cursor = m.index + units;
  }
  NON_ASCII_UNIT.lastIndex = 0;
  if (!builder) return base ?? identityText(source);
  builder.keep(cursor, source.length);
  return builder.build(base);
}
