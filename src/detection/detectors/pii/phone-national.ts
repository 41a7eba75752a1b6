import { findPhoneNumbersInText, isSupportedCountry, Metadata, type CountryCode, type NumberFound } from 'libphonenumber-js';
import { DEFAULT_PII_REGIONS } from '../../../shared/policy';
import { digitsOf } from './signals';

/**
 * National phone formats of the policy's pii_regions for pii/phone_number: "020 7946 0958" (GB),
 * "06 12 34 56 78" (FR), "(0)30 1234567" (DE), "090-1234-5678" (JP), "612 34 56 78" (ES).
 *
 * A segment that is not "+CC" / "00CC" / a North American number is handed to libphonenumber-js'
 * matcher (findPhoneNumbersInText, i.e. findNumbers v2 / PhoneNumberMatcher) once per region whose
 * numbering plan it can fit, in the policy's order, until one region finds a VALID number. "Can fit" is
 * a string test on the plan's metadata (national prefix, possible lengths of the national significant
 * number), so a segment of the wrong length costs no library call; a call costs ~15 µs.
 */

export interface RegionPlan {
  readonly region: CountryCode;
  /** The trunk prefix dialled before national numbers ("0"), if the plan has one. */
  readonly prefix: string | undefined;
  readonly lengths: ReadonlySet<number>;
}

const metadata = new Metadata();

/** nationalPrefix() exists on the runtime numbering plan (metadata.js) but not in the package's types. */
interface PlanWithPrefix {
  possibleLengths(): number[];
  nationalPrefix?(): string | undefined;
}
const planCache = new Map<string, RegionPlan>();

function planOf(region: string): RegionPlan | undefined {
  const hit = planCache.get(region);
  if (hit) return hit;
  if (!isSupportedCountry(region)) return undefined;
  metadata.selectNumberingPlan(region);
  const plan = metadata.numberingPlan as PlanWithPrefix | undefined;
  if (!plan) return undefined;
  const prefix = plan.nationalPrefix?.() || undefined;
  const made: RegionPlan = { region, prefix, lengths: new Set(plan.possibleLengths()) };
  planCache.set(region, made);
  return made;
}

const listCache = new Map<string, readonly RegionPlan[]>();

/** The numbering plans of a region list (default list when undefined or empty); cached per list. */
export function regionPlans(regions: readonly string[] | undefined): readonly RegionPlan[] {
  const list = regions !== undefined && regions.length > 0 ? regions : DEFAULT_PII_REGIONS;
  const key = list.join(',');
  const hit = listCache.get(key);
  if (hit) return hit;
  const plans = list.map(planOf).filter((p): p is RegionPlan => p !== undefined);
  if (listCache.size > 256) listCache.clear();
  listCache.set(key, plans);
  return plans;
}

/**
 * Regions whose national numbers are commonly written without the plan's trunk prefix: Italy (the
 * leading "0" of a landline is part of the number, mobiles start with "3"), the North American plan
 * (trunk "1" is usually left out), Brazil, Mexico and India (mobiles). Elsewhere (GB, DE, FR, NL, JP, …) a
 * national number is written with its trunk "0"; a digit group without it is not read as one.
 */
const TRUNK_OPTIONAL: ReadonlySet<string> = new Set(['IT', 'SM', 'VA', 'US', 'CA', 'BR', 'MX', 'IN']);

/** Whether `digits` (a national number as written, trunk prefix included) has a shape the plan allows. */
export function fitsPlan(plan: RegionPlan, digits: string): boolean {
  const { prefix, lengths } = plan;
  const trunkLed = prefix !== undefined && digits.startsWith(prefix) && lengths.has(digits.length - prefix.length);
  if (trunkLed) return true;
  if (prefix !== undefined && !TRUNK_OPTIONAL.has(plan.region)) return false;
  return lengths.has(digits.length);
}

/** The plans a segment's digits can fit, in policy order. */
export function fittingPlans(plans: readonly RegionPlan[], segment: string): RegionPlan[] {
  // Ranges and decimals ("256–16384", "0.987–0.997") are written with typographic dashes or a "0."
  // lead; national numbers with spaces, "-", ".", "/" and parentheses.
  if (plans.length === 0 || NOT_NATIONAL.test(segment)) return [];
  const digits = digitsOf(segment);
  return plans.filter((p) => !NANP_REGIONS.has(p.region) && fitsPlan(p, digits));
}

const NOT_NATIONAL = /[\u2010-\u2015\u2212]|^\(?0\.[0-9]/;

/**
 * North American numbers are the detector's own path (NANP shape, then the matcher with default country
 * US, which also validates CA and the other +1 countries), whatever pii_regions says.
 */
const NANP_REGIONS: ReadonlySet<string> = new Set(['US', 'CA']);

export interface NationalMatch {
  found: NumberFound[];
  region: CountryCode;
  /** The region's trunk prefix, if its plan has one. */
  prefix: string | undefined;
}

/**
 * The valid numbers the matcher finds in `slice` for the first fitting region that has any, or
 * undefined. `call` runs (and budgets) each library call.
 */
export function findNational(slice: string, plans: readonly RegionPlan[], call: (fn: () => void) => void): NationalMatch | undefined {
  for (const plan of plans) {
    let found: NumberFound[] = [];
    call(() => {
      found = findPhoneNumbersInText(slice, { defaultCountry: plan.region, extended: true }).filter((f) => f.number.isValid());
    });
    if (found.length > 0) return { found, region: plan.region, prefix: plan.prefix };
  }
  return undefined;
}

/**
 * "912 345 678", "1.234.567": groups of three after a first group of 1-3 digits, no trunk "0". How
 * thousands are written in most of Europe; such a segment is only a phone number with a phone word
 * nearby (the caller caps it otherwise).
 */
export function thousandsShaped(segment: string): boolean {
  return /^[1-9][0-9]{0,2}(?:([ .\u00a0\u202f])[0-9]{3})(?:\1[0-9]{3})*$/.test(segment);
}
