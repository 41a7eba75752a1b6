import { getCountrySpecifications, isValidIBAN } from 'ibantools';
import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { DigitRunMatches, textIndexOf } from '../../text-index';
import { AbortTicker, codeAt, ContextWords, isAlnum, isWordChar, MAX_FINDINGS } from './signals';

/**
 * pii/iban_code: International Bank Account Numbers, validated by `ibantools` (country code known, the
 * country's exact length and BBAN format, ISO 7064 mod-97 check digits).
 *
 * Candidates start at a word boundary with two letters and two digits ("DE89", "gb82"). From there the
 * detector collects exactly the country's IBAN length of letters/digits, skipping single spaces or
 * hyphens between them, so "DE89 3704 0044 0532 0130 00", "DE89370400440532013000", lowercase and
 * hyphenated forms are found; trailing punctuation ("…0130 00.", "…00)") is not part of the span. A
 * letter or digit glued right after the last character means the candidate is something longer and
 * it is skipped.
 *
 * Confidence (mod-97 leaves about 1 in 97 random strings, and the per-country BBAN format most of the
 * rest, so a valid IBAN is strong evidence on its own):
 *   0.95, 0.98 with a context word (iban, bank, account, transfer, swift, bic, sepa, …)
 *   0.85 / 0.95 for countries that use IBANs outside the official SWIFT registry (ibantools lists them
 *   with IBANRegistry=false, e.g. DZ, AO, CI)
 * Published example IBANs (DE89 3704 0044 0532 0130 00, GB82 WEST 1234 5698 7654 32) are reported like any
 * other: they are rarely used as placeholders in code, unlike test card numbers.
 */

export const IBAN_CONFIDENCE = {
  withContext: 0.98,
  plain: 0.95,
  unregisteredWithContext: 0.95,
  unregistered: 0.85,
} as const;

interface CountrySpec {
  chars: number;
  registry: boolean;
}

const COUNTRIES: ReadonlyMap<string, CountrySpec> = new Map(
  Object.entries(getCountrySpecifications())
    .filter(([, spec]) => typeof spec.chars === 'number' && spec.chars > 0)
    .map(([code, spec]) => [code, { chars: spec.chars as number, registry: spec.IBANRegistry === true }]),
);

// Country code + check digits + the first BBAN characters: only the start of a candidate; the rest is
// collected by length (a pattern cannot know each country's length). Fixed length: constant work per start.
// Sticky: tried two characters before each digit-run start (text-index.ts), where every match begins.
const START = /\b[A-Za-z]{2}[0-9]{2}[ -]?[A-Za-z0-9]{4}/y;
const TWO_LETTERS_BEFORE = () => 2;

const CONTEXT = new ContextWords([
  'iban', 'bank', 'account', 'acct', 'transfer', 'wire', 'swift', 'bic', 'sepa', 'konto', 'kontonummer',
  'rib', 'cuenta', 'compte', 'conto', 'beneficiary', 'payee', 'remittance', 'bankverbindung',
]);

const MAX_IBAN_LENGTH = 34;

export class IbanDetector implements Detector {
  readonly type = 'pii/iban_code' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const ticker = new AbortTicker(signal);
    const findings: DetectorFinding[] = [];
    const matches = new DigitRunMatches(textIndexOf(input), START, TWO_LETTERS_BEFORE);
    for (let m = matches.next(); m && findings.length < MAX_FINDINGS; m = matches.next()) {
      ticker.tick();
      const start = m.index;
      matches.from = start + m[0].length;
      if (codeAt(text, start - 1) === 0x5f /* _ */) continue;
      const found = matchIban(text, start);
      if (!found) {
        matches.from = start + 1;
        continue;
      }
      findings.push({ confidence: found.confidence, start, end: found.end });
      matches.from = found.end;
    }
    return findings;
  }
}

/** The IBAN starting at `start`, if there is a valid one. */
function matchIban(text: string, start: number): { end: number; confidence: number } | undefined {
  const spec = COUNTRIES.get(text.slice(start, start + 2).toUpperCase());
  if (!spec) return undefined;
  const collected = collect(text, start, spec.chars);
  if (!collected) return undefined;
  if (!isValidIBAN(collected.iban)) return undefined;
  const context = CONTEXT.near(text, start, collected.end);
  const C = IBAN_CONFIDENCE;
  const confidence = spec.registry ? (context ? C.withContext : C.plain) : context ? C.unregisteredWithContext : C.unregistered;
  return { end: collected.end, confidence };
}

/**
 * Collects `length` letters/digits from `start`, allowing one space or hyphen between two of them.
 * Undefined when the text runs out first or the IBAN continues with a glued letter/digit.
 */
function collect(text: string, start: number, length: number): { iban: string; end: number } | undefined {
  if (length > MAX_IBAN_LENGTH) return undefined;
  let iban = '';
  let i = start;
  while (iban.length < length && i < text.length) {
    const c = text.charCodeAt(i);
    if (isAlnum(c)) {
      iban += text[i];
      i++;
      continue;
    }
    const isSeparator = c === 0x20 || c === 0x2d;
    if (!isSeparator || iban.length === 0 || !isAlnum(codeAt(text, i + 1))) return undefined;
    i++;
  }
  if (iban.length < length || isWordChar(codeAt(text, i))) return undefined;
  // "DE89-3704-…-00-99": a hyphenated token that goes on is longer than an IBAN.
  if (codeAt(text, i) === 0x2d && isAlnum(codeAt(text, i + 1))) return undefined;
  return { iban: iban.toUpperCase(), end: i };
}
