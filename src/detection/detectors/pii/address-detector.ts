import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { textIndexOf } from '../../text-index';
import { coreAt, type Core } from './address-core';
import { streetLineCandidates } from './address-intl';
import { ADDRESS_CONTEXT, CONTEXT_WINDOW, STATE_CODES, STATE_NAMES, TAIL, TAIL_WINDOW } from './address-patterns';

/**
 * pii/address: postal addresses. Every digit run anchors a look for an address core (address-core.ts):
 *   - US/UK street lines: house number + 1–5 name words + street suffix (+ post-directional),
 *   - German/Dutch/Nordic "Hauptstraße 5", French "12 rue de la Paix", Spanish/Italian/Portuguese
 *     "Calle Mayor 10" / "Via Roma 12",
 *   - PO boxes ("P.O. Box 1234", "Postfach 1020"), and a bare "City, ST 12345";
 * then the TAIL regexes (sticky, bounded) read what follows the core (unit, city, state, ZIP, UK or EU postcode), and the
 * confidence counts the parts present:
 *   0.45  lower-case street line ("12 main st")      0.50  weak suffix ("5 Oak Park"), EU/ES/IT core,
 *   0.55  number + name + suffix ("1 Main Street"),        bare "City, ST 12345"
 *         French core                              0.60  PO box alone
 *   +0.03 a unit; +0.10 only a city after the core  0.80  core + state or ZIP (0.85 with the city)
 *   0.85  core + UK postcode (0.90 with the town)   0.90  core + state + ZIP; EU core + postcode + city
 *   0.95  core + city + state + ZIP
 * Address context shortly before ("my address is", "ship to", "lives at", "Anschrift", …) adds 0.2
 * (at most 0.95). So an isolated "1 Main Street" fires only at L3/L4, while "ship to 1 Main Street" or a
 * street line with a city/state/ZIP fires at L2.
 *
 * Not addresses: a number after "version/step/page/line/port/return/…", a year after "in/since",
 * lower-case everyday suffixes ("5 main loop"; "3 way merge" has no name word), mixed-case word runs
 * ("5 miles down Oak Street": the number does not belong to the street).
 *
 * Speed: a text without digits costs one regex test; otherwise one pass over digit runs with constant
 * work each, and a handful of sticky regex calls only for a confirmed core.
 */

const MAX_FINDINGS = 1000;
const STATE_NAME_SET = new Set(STATE_NAMES);

export class AddressDetector implements Detector {
  readonly type = 'pii/address' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const findings: DetectorFinding[] = [];
    // Every run of digits (text-index.ts) may be a house number; after a finding, the search resumes at
    // its end (in the middle of a run, the rest of that run counts as a run).
    const runs = textIndexOf(input).digitRuns();
    let resume = 0;
    let lastEnd = 0;
    for (let r = 0; r < runs.length && findings.length < MAX_FINDINGS; r += 2) {
      if (r % 1024 === 1022) signal.throwIfAborted();
      const end = runs[r + 1] as number;
      if (end <= resume) continue;
      const start = Math.max(runs[r] as number, resume);
      const core = coreAt(text, start, end);
      const finding = core ? (core.start < lastEnd ? undefined : scoreAddress(text, core)) : postcodeAnchored(text, start, end, lastEnd);
      if (!finding) continue;
      findings.push(finding);
      lastEnd = finding.end;
      if (finding.end > end) resume = finding.end;
    }
    return findings;
  }
}

/**
 * A street line of capitalised words around the number whose street type no pattern knows, kept only
 * when a postcode and a city follow it (address-intl.ts): scored like a core with that tail.
 */
function postcodeAnchored(text: string, ds: number, de: number, lastEnd: number): DetectorFinding | undefined {
  // Cheap gate: a house number stands between blanks / a comma ("27 Kingsley", "Olivia, 16,", "736b, ").
  const after = text.charCodeAt(de);
  const before = text.charCodeAt(ds - 1);
  if (before !== 0x20 && before !== 0x09) return undefined;
  if (after !== 0x20 && after !== 0x2c && !(after >= 0x61 && after <= 0x7a) && after !== 0x2d) return undefined;
  // …and a street name beside it: a capitalised word after it, or a word (of letters) before it.
  let b = ds - 1;
  while (b > 0 && (text.charCodeAt(b) === 0x20 || text.charCodeAt(b) === 0x2c)) b--;
  const nameBefore = LETTER_AT.test(text.charAt(b));
  const nameAfter = UPPER_AT.test(text.charAt(de + 1)) || UPPER_AT.test(text.charAt(de + 2)) || UPPER_AT.test(text.charAt(de + 3));
  if (!nameBefore && !nameAfter) return undefined;
  for (const line of streetLineCandidates(text, ds, de)) {
    if (line.start < lastEnd) continue;
    POSTCODE_AHEAD.lastIndex = line.end;
    if (!POSTCODE_AHEAD.test(text)) continue;
    const tail = readTail(text, line.end);
    if (!(tail.euPostcode || tail.ukPostcode || (tail.zip && tail.state && tail.city))) continue;
    const finding = scoreAddress(text, line, tail);
    if (finding.confidence >= 0.75) return finding;
  }
  return undefined;
}

const LETTER_AT = /^\p{L}$/u;
const UPPER_AT = /^\p{Lu}$/u;

/** What follows a street line before its postcode: a separator, then a digit or a capital (town, postcode). */
const POSTCODE_AHEAD = /(?:[ \t]*,[ \t]*|[ \t]+)[\p{Lu}0-9]/uy;

function scoreAddress(text: string, core: Core, knownTail?: Tail): DetectorFinding {
  let score = core.base;
  let end = core.end;
  if (core.kind !== 'csz' && core.kind !== 'jp') {
    const tail = knownTail ?? readTail(text, core.end);
    end = core.end + tail.length;
    score = scoreParts(core, tail);
  }
  const context = text.slice(Math.max(0, core.start - CONTEXT_WINDOW), core.start);
  if (ADDRESS_CONTEXT.test(context)) score = Math.max(score, Math.min(0.95, score + 0.2));
  return { confidence: Math.round(score * 100) / 100, start: core.start, end };
}

interface Tail {
  length: number;
  unit: boolean;
  city: boolean;
  state: boolean;
  zip: boolean;
  ukPostcode: boolean;
  euPostcode: boolean;
}

/** Tries a sticky regex at `pos`; returns the end of the match or -1. */
function at(re: RegExp, text: string, pos: number): number {
  re.lastIndex = pos;
  const m = re.exec(text);
  return m ? pos + m[0].length : -1;
}

/** Reads unit, city, state and postal code after a core, in that order, each optional. */
function readTail(text: string, from: number): Tail {
  const t: Tail = { length: 0, unit: false, city: false, state: false, zip: false, ukPostcode: false, euPostcode: false };
  const limit = Math.min(text.length, from + TAIL_WINDOW);
  let pos = from;
  let sep = at(TAIL.sep, text, pos);
  if (sep > 0) {
    const unit = at(TAIL.unit, text, sep);
    if (unit > 0 && unit <= limit) {
      t.unit = true;
      pos = unit;
      sep = at(TAIL.sep, text, pos);
    }
  }
  if (sep > 0) pos = readCityState(text, sep, t, pos);
  const stateSep = at(TAIL.stateSep, text, pos);
  if (!t.state && stateSep > 0) {
    const state = readState(text, stateSep);
    if (state > 0) {
      t.state = true;
      pos = state;
    }
  }
  const postalSep = at(TAIL.postalSep, text, pos);
  if (postalSep > 0) pos = readPostal(text, postalSep, t, pos);
  t.length = Math.min(pos, limit) - from;
  return t;
}

/** A city (which may end in a state: "Springfield IL"), then an optional ", ST" / ", Illinois". */
function readCityState(text: string, start: number, t: Tail, fallback: number): number {
  const end = at(TAIL.city, text, start);
  if (end < 0) return fallback;
  const city = text.slice(start, end);
  const words = city.split(/[ \t]/);
  const last = words[words.length - 1] as string;
  t.state = STATE_CODES.has(city) || STATE_NAME_SET.has(city);
  if (t.state) {
    // "Washington, DC", "New York, NY": a city named like a state, followed by the state.
    const sep = at(TAIL.stateSep, text, end);
    const state = sep > 0 ? readState(text, sep) : -1;
    if (state < 0) return end;
    t.city = true;
    return state;
  }
  t.city = true;
  if (words.length > 1 && (STATE_CODES.has(last) || STATE_NAME_SET.has(last))) t.state = true;
  return end;
}

function readState(text: string, start: number): number {
  const code = at(TAIL.stateCode, text, start);
  if (code > 0 && STATE_CODES.has(text.slice(start, code))) return code;
  const name = at(TAIL.stateName, text, start);
  if (name > 0 && STATE_NAME_SET.has(text.slice(start, name).replace(/[ \t]+/g, ' '))) return name;
  const first = name > 0 ? text.slice(start, name).split(/[ \t]/)[0] : undefined;
  if (first && STATE_NAME_SET.has(first)) return start + first.length;
  return -1;
}

/** "75002 Paris" / "1015 CJ Amsterdam" (EU postcode + city), a US ZIP, or a UK postcode. */
function readPostal(text: string, start: number, t: Tail, fallback: number): number {
  const eu = at(TAIL.euPostcode, text, start);
  if (eu > 0) {
    const city = at(TAIL.city, text, eu);
    if (city > 0) {
      t.euPostcode = true;
      return city;
    }
  }
  const zip = at(TAIL.usZip, text, start);
  if (zip > 0) {
    t.zip = true;
    return zip;
  }
  const uk = at(TAIL.ukPostcode, text, start);
  if (uk > 0) {
    t.ukPostcode = true;
    return uk;
  }
  return fallback;
}

function scoreParts(core: Core, t: Tail): number {
  let score = core.base;
  const zip = t.zip || (t.euPostcode && core.kind === 'us');
  if (t.state && zip) score = t.city ? 0.95 : 0.9;
  else if (t.ukPostcode) score = t.city ? 0.9 : 0.85;
  else if (t.euPostcode) score = 0.9;
  else if (t.state || zip) score = t.city ? 0.85 : 0.8;
  else if (t.city) score = core.base + 0.1;
  if (t.unit) score += 0.03;
  return Math.min(score, 0.97);
}


