import { getCountrySpecifications, isValidIBAN } from 'ibantools';
import { codeAt, isAlnum, isAsciiLetter, isDigit, isWordChar } from './signals';

/** Guards of pii/phone_number that need more than a pattern: the digit groups that end a printed IBAN. */

const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  Object.entries(getCountrySpecifications())
    .filter(([, spec]) => typeof spec.chars === 'number' && spec.chars > 0 && spec.chars <= 34)
    .map(([code, spec]) => [code, spec.chars as number]),
);

/**
 * True when text[start, end) ends a printed IBAN that starts before it ("GB82 WEST 1234 5698 7654 32"):
 * a word-boundary "CCdd" within the 34 letters/digits before the run (single spaces or hyphens between
 * them), whose country's IBAN length of characters, collected as pii/iban_code does, passes mod-97 and
 * reaches the end of the run without anything glued after it. Constant work per run.
 */
export function insideIban(text: string, start: number, end: number): boolean {
  let i = start;
  let chars = 0;
  while (i > 0 && chars < 34) {
    const c = text.charCodeAt(i - 1);
    if (isAlnum(c)) {
      i--;
      chars++;
    } else if ((c === 0x20 || c === 0x2d) && isAlnum(codeAt(text, i - 2))) i--;
    else break;
  }
  for (let p = i; p < start; p++) {
    if (isWordChar(codeAt(text, p - 1)) || !isAsciiLetter(text.charCodeAt(p)) || !isAsciiLetter(codeAt(text, p + 1))) continue;
    if (!isDigit(codeAt(text, p + 2)) || !isDigit(codeAt(text, p + 3))) continue;
    const length = IBAN_LENGTHS.get(text.slice(p, p + 2).toUpperCase());
    if (length === undefined) continue;
    let iban = '';
    let j = p;
    while (iban.length < length && j < text.length) {
      const c = text.charCodeAt(j);
      if (isAlnum(c)) {
        iban += text[j];
        j++;
      } else if ((c === 0x20 || c === 0x2d) && iban.length > 0 && isAlnum(codeAt(text, j + 1))) j++;
      else break;
    }
    if (iban.length < length || isWordChar(codeAt(text, j)) || j < end) continue;
    if (codeAt(text, j) === 0x2d && isAlnum(codeAt(text, j + 1))) continue;
    if (isValidIBAN(iban.toUpperCase())) return true;
  }
  return false;
}
