import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { DigitRunMatches, textIndexOf } from '../../text-index';
import {
  AbortTicker,
  codeAt,
  ContextWords,
  digitsOf,
  isAsciiLetter,
  isDigit,
  isWordChar,
  MAX_FINDINGS,
} from './signals';

/**
 * pii/us_social_security_number: AAA-GG-SSSS.
 *
 * Shape: three digit groups 3-2-4 with the same delimiter twice ("-" or a Unicode hyphen/dash, or one
 * space) or none
 * ("123456789"); mixed delimiters ("123-45 6789") are not an SSN. Rules of the SSA: area not 000, 666
 * or 900-999 (the 9xx range holds ITINs), group not 00, serial not 0000.
 *
 * Not reported: a match inside a longer digit run or glued to letters ("ID123-45-6789x"), continued by
 * another digit group ("123-45-6789-01"), or preceded by "+" (an international phone number).
 *
 * Confidence:
 *   dashed      0.95 with a context word, 0.80 without
 *   spaced      0.90 with context,       0.60 without (spaced digit groups are often other numbers)
 *   undelimited 0.85 with context,       0.30 without (any 9-digit number; only context makes it an SSN)
 *   known invalid / advertising / specimen numbers (078-05-1120, 219-09-9999, 123-45-6789 …): 0.35
 *   phone words nearby ("call", "tel", "fax" …) and no SSN word: at most 0.50
 * Context words: ssn, social security, ss#, soc sec, taxpayer, tin, ssa …, within 40 characters.
 */

export const SSN_CONFIDENCE = {
  dashedWithContext: 0.95,
  dashed: 0.8,
  spacedWithContext: 0.9,
  spaced: 0.6,
  bareWithContext: 0.85,
  bare: 0.3,
  specimen: 0.35,
  phoneContextCap: 0.5,
} as const;

// "-" also stands for the Unicode hyphens and dashes (U+2010..U+2015, minus U+2212) that NFKC keeps.
const DASH = '\\-\u2010-\u2015\u2212';
// Fixed-length pattern: constant work per start position (see signals.ts on linear-time matching); never
// starts or ends inside a longer digit run.
// Sticky: run at digit-run starts only (text-index.ts), where every match begins.
const CANDIDATE = new RegExp(`(?<![0-9])[0-9]{3}[${DASH} ]?[0-9]{2}[${DASH} ]?[0-9]{4}(?![0-9])`, 'y');

const CONTEXT = new ContextWords([
  'ssn', 'ssns', 'ssn#', 'social security', 'social security number', 'social sec', 'soc sec', 'ss#', 'ss',
  'ss no', 'taxpayer', 'tin', 'ssa', 'social', 'ssn no', 'ssn number',
]);
const PHONE_CONTEXT = new ContextWords(['call', 'phone', 'tel', 'telephone', 'fax', 'mobile', 'cell', 'dial']);

/** Numbers the SSA voided or that are printed on specimen cards and forms. */
const SPECIMEN = new Set([
  '078051120', '219099999', '123456789', '111111111', '222222222', '333333333', '444444444', '555555555',
  '777777777', '888888888', '987654321', '012345678',
]);

const HYPHEN = 0x2d;
const SPACE = 0x20;

export function ssnRulesValid(area: string, group: string, serial: string): boolean {
  if (area === '000' || area === '666' || area.startsWith('9')) return false;
  return group !== '00' && serial !== '0000';
}

export class UsSsnDetector implements Detector {
  readonly type = 'pii/us_social_security_number' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const ticker = new AbortTicker(signal);
    const findings: DetectorFinding[] = [];
    const matches = new DigitRunMatches(textIndexOf(input), CANDIDATE);
    for (let m = matches.next(); m && findings.length < MAX_FINDINGS; m = matches.next()) {
      ticker.tick();
      const start = m.index;
      const end = start + m[0].length;
      const confidence = scoreSsn(text, start, end);
      if (confidence > 0) {
        findings.push({ confidence, start, end });
        matches.from = end;
      }
      // A rejected match may hide a real one that starts inside it ("1 123-45-6789" is fine, but
      // "12345 678-90-1234" should still be looked at from the next position).
      else matches.from = start + 1;
    }
    return findings;
  }
}

/** 0 = not an SSN; otherwise the confidence of text[start, end). */
export function scoreSsn(text: string, start: number, end: number): number {
  const raw = text.slice(start, end);
  const delimiter = delimiterOf(raw);
  if (delimiter === undefined) return 0; // mixed delimiters
  if (!cleanBoundaries(text, start, end)) return 0;
  const digits = digitsOf(raw);
  if (!ssnRulesValid(digits.slice(0, 3), digits.slice(3, 5), digits.slice(5))) return 0;
  if (SPECIMEN.has(digits)) return SSN_CONFIDENCE.specimen;
  const context = CONTEXT.near(text, start, end);
  const C = SSN_CONFIDENCE;
  let confidence: number;
  if (delimiter === HYPHEN) confidence = context ? C.dashedWithContext : C.dashed;
  else if (delimiter === SPACE) confidence = context ? C.spacedWithContext : C.spaced;
  else confidence = context ? C.bareWithContext : C.bare;
  if (!context && PHONE_CONTEXT.near(text, start, end)) confidence = Math.min(confidence, C.phoneContextCap);
  return confidence;
}

/** The delimiter char code (0 = none), or undefined when the two delimiters differ. */
function delimiterOf(raw: string): number | undefined {
  const d1 = delimiterCode(raw.charCodeAt(3));
  const d2 = delimiterCode(raw.charCodeAt(d1 === 0 ? 5 : 6));
  return d1 === d2 ? d1 : undefined;
}

/** 0 for a digit (no delimiter), HYPHEN for any hyphen or dash, else the code itself. */
function delimiterCode(code: number): number {
  if (isDigit(code)) return 0;
  return isDash(code) ? HYPHEN : code;
}

function isDash(code: number): boolean {
  return code === HYPHEN || (code >= 0x2010 && code <= 0x2015) || code === 0x2212;
}

/** Not part of a longer number, identifier, date, version or phone shape. */
function cleanBoundaries(text: string, start: number, end: number): boolean {
  const before = codeAt(text, start - 1);
  const after = codeAt(text, end);
  if (isWordChar(before) || isWordChar(after)) return false;
  if (before === 0x2b /* + */) return false;
  // "12-123-45-6789", "1.123-45-6789", "10/123 45 6789": joined to a preceding number; "v-123-45-6789",
  // "id.123-45-6789": joined to an identifier.
  const before2 = codeAt(text, start - 2);
  if (isJoiner(before) && isDigit(before2)) return false;
  if ((before === HYPHEN || before === 0x2e) && isAsciiLetter(before2)) return false;
  // "123-45-6789-01", "123-45-6789.5", "123 45 6789/2": continued by another number.
  if (isJoiner(after) && isDigit(codeAt(text, end + 1))) return false;
  // "555 123 45 6789": a spaced group of digits before a spaced candidate is a longer spaced number.
  if (before === SPACE && isDigit(codeAt(text, start - 2)) && text.charCodeAt(start + 3) === SPACE) return false;
  if (after === SPACE && isDigit(codeAt(text, end + 1)) && text.charCodeAt(start + 3) === SPACE) return false;
  return true;
}

function isJoiner(code: number): boolean {
  return isDash(code) || code === 0x2e /* . */ || code === 0x2f /* / */ || code === 0x3a /* : */;
}
