import { fakerDE, fakerEN_GB, fakerEN_US, fakerES, fakerFR, fakerIT, fakerJA, fakerNL, type Faker } from '@faker-js/faker';
import { composeIBAN, friendlyFormatIBAN, isValidBBAN, isValidIBAN } from 'ibantools';
import ipaddr from 'ipaddr.js';
import { findPhoneNumbersInText, type CountryCode } from 'libphonenumber-js';
import { PII_TYPES, type EvalDoc, type GoldSpan, type PiiType } from './eval-pii-handwritten';
import { TEMPLATES } from './eval-pii-templates';

export { handwrittenDocs, PII_TYPES, type EvalDoc, type GoldSpan, type PiiType } from './eval-pii-handwritten';

/**
 * The PII evaluation set of eval-pii.ts: (1) documents generated with @faker-js/faker (seeded, so the
 * same on every run) inside the locale's sentence templates, gold spans known by construction; (2) the
 * hand-written texts of test/fixtures/pii-eval/handwritten.jsonl, gold spans given by their text.
 *
 * faker's phone numbers are random digits in a locale's layouts and about half of them are not numbers
 * any telephone plan could assign (it: "+70 310 13354628"); a phone value is drawn again until
 * libphonenumber-js calls it valid for the locale's country (the invalid share is reported). Cards use
 * explicit network layouts with faker's Luhn digit ("L"), including 12-digit Maestro and JCB. Likewise
 * faker's FR and ES IBANs often fail their national check digits (ibantools) and its IP addresses are
 * uniformly random (multicast, reserved, unallocated IPv6): those are drawn again too, so the gold holds
 * only values that identify an account or a host. Redraws are counted in DrawStats.
 */

const isPiiType = (key: string): key is PiiType => (PII_TYPES as readonly string[]).includes(key);

interface Locale {
  faker: Faker;
  region: CountryCode;
  iban: string;
  address(f: Faker): string;
}

const LOCALES: Readonly<Record<string, Locale>> = {
  en_US: { faker: fakerEN_US, region: 'US', iban: 'GB', address: (f) => `${f.location.streetAddress()}, ${f.location.city()}, ${f.location.state({ abbreviated: true })} ${f.location.zipCode()}` },
  en_GB: { faker: fakerEN_GB, region: 'GB', iban: 'GB', address: (f) => `${f.location.streetAddress()}, ${f.location.city()} ${ukPostcode(f)}` },
  de: { faker: fakerDE, region: 'DE', iban: 'DE', address: european },
  fr: { faker: fakerFR, region: 'FR', iban: 'FR', address: european },
  es: { faker: fakerES, region: 'ES', iban: 'ES', address: european },
  it: { faker: fakerIT, region: 'IT', iban: 'IT', address: european },
  nl: { faker: fakerNL, region: 'NL', iban: 'NL', address: european },
  ja: { faker: fakerJA, region: 'JP', iban: 'DE', address: (f) => `〒${f.location.zipCode()} ${f.location.state()}${f.location.city()}${f.location.streetAddress()}` },
};

/**
 * A postcode of the UK's format (outward code, space, digit + two letters). faker 10's en_GB postcodes are
 * about half malformed ("KA34 00C"): those are drawn again (not counted: they are no postcode at all).
 */
function ukPostcode(f: Faker): string {
  for (let i = 0; i < 100; i++) {
    const code = f.location.zipCode();
    if (/^[A-Z]{1,2}[0-9][A-Z0-9]? [0-9][A-Z]{2}$/.test(code)) return code;
  }
  throw new Error('no UK postcode drawn');
}

function european(f: Faker): string {
  return `${f.location.streetAddress()}, ${f.location.zipCode()} ${f.location.city()}`;
}

const CARD_LAYOUTS = [
  '4###-####-####-###L', '4### #### #### ###L', '5[1-5]##-####-####-###L', '2221 ####-####-###L', '37## ###### ####L',
  '6011 #### #### ###L', '3528 #### #### ###L', '35[3-8]#-####-####-###L', '2131 #### #### ##L', '6759 #### ###L',
  '5018 #### #### ###L', '6304########L',
];

export interface DrawStats {
  drawn: Record<string, number>;
  invalid: Record<string, number>;
}

/** A value of `make` that `ok` accepts, counting draws and rejects under `kind`. */
function draw(kind: string, stats: DrawStats, make: () => string, ok: (v: string) => boolean): string {
  for (let tries = 0; tries < 200; tries++) {
    const value = make();
    stats.drawn[kind] = (stats.drawn[kind] ?? 0) + 1;
    if (ok(value)) return value;
    stats.invalid[kind] = (stats.invalid[kind] ?? 0) + 1;
  }
  throw new Error(`no valid ${kind} drawn`);
}

/**
 * Where a BBAN's national check digits sit (ibantools checks them; faker leaves them random): Spain's
 * two control digits after bank and branch, France's RIB key at the end.
 */
const NATIONAL_CHECK_AT: Readonly<Record<string, number>> = { ES: 8, FR: 21 };

/** A faker IBAN whose national check digits are set right, printed grouped or not. */
function iban(f: Faker, countryCode: string): string {
  let value = f.finance.iban({ countryCode });
  const at = NATIONAL_CHECK_AT[countryCode];
  if (at !== undefined) {
    const bban = value.slice(4);
    for (let d = 0; d < 100; d++) {
      const fixed = bban.slice(0, at) + String(d).padStart(2, '0') + bban.slice(at + 2);
      if (isValidBBAN(fixed, countryCode)) {
        value = composeIBAN({ countryCode, bban: fixed }) ?? value;
        break;
      }
    }
  }
  return f.datatype.boolean() ? friendlyFormatIBAN(value) ?? value : value;
}

const HOST_RANGES = new Set(['unicast', 'private', 'uniqueLocal', 'carrierGradeNat']);

function hostAddress(value: string): boolean {
  const range = ipaddr.parse(value).range();
  return HOST_RANGES.has(range) && !(ipaddr.IPv6.isValid(value) && !value.startsWith('2') && !value.startsWith('3') && range === 'unicast');
}

function phone(loc: Locale, stats: DrawStats): string {
  const f = loc.faker;
  return draw(
    'phone',
    stats,
    () => f.phone.number({ style: f.helpers.arrayElement(['human', 'national', 'national', 'international'] as const) }),
    (v) => findPhoneNumbersInText(v, { defaultCountry: loc.region }).some((n) => n.number.isValid()),
  );
}

function ssn(f: Faker): string {
  let area = f.number.int({ min: 1, max: 899 });
  if (area === 666) area = 667;
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  return `${pad(area, 3)}-${pad(f.number.int({ min: 1, max: 99 }), 2)}-${pad(f.number.int({ min: 1, max: 9999 }), 4)}`;
}

function piiValue(type: PiiType, loc: Locale, stats: DrawStats, person: { first: string; last: string; full: string }): string {
  const f = loc.faker;
  switch (type) {
    case 'name': return person.full;
    case 'email': return f.internet.email({ firstName: person.first, lastName: person.last }).toLowerCase();
    case 'phone': return phone(loc, stats);
    case 'address': return loc.address(f);
    case 'card': return f.finance.creditCardNumber(f.helpers.arrayElement(CARD_LAYOUTS));
    case 'iban': return draw('iban', stats, () => iban(f, loc.iban), (v) => isValidIBAN(v.replace(/ /g, '')));
    case 'ssn': return ssn(f);
    case 'ip': return draw('ip', stats, () => (f.datatype.boolean(0.8) ? f.internet.ipv4() : f.internet.ipv6()), hostAddress);
  }
}

const NEGATIVE_FILLERS: Readonly<Record<string, (f: Faker) => string>> = {
  n: (f) => String(f.number.int({ min: 2, max: 500 })),
  n2: (f) => String(f.number.int({ min: 2, max: 60 })),
  date: (f) => f.date.between({ from: '2019-01-01', to: '2026-12-31' }).toISOString().slice(0, 10),
  ver: (f) => f.system.semver(),
  order: (f) => f.helpers.arrayElement([`#${f.string.numeric(8)}`, `${f.string.alpha({ length: 3, casing: 'upper' })}-${f.string.numeric(6)}`, f.string.numeric(10)]),
  amount: (f) => f.finance.amount({ min: 1000, max: 9_999_999, dec: 0 }),
  year: (f) => String(f.number.int({ min: 1990, max: 2026 })),
};

/** Fills a template; returns the text and the gold spans of its PII placeholders. */
function fill(template: string, value: (key: string) => { text: string; type?: PiiType }): { text: string; gold: GoldSpan[] } {
  let text = '';
  const gold: GoldSpan[] = [];
  let last = 0;
  for (const m of template.matchAll(/\{([a-z0-9]+)\}/g)) {
    text += template.slice(last, m.index);
    const v = value(m[1] as string);
    if (v.type) gold.push({ type: v.type, start: text.length, end: text.length + v.text.length });
    text += v.text;
    last = (m.index ?? 0) + m[0].length;
  }
  return { text: text + template.slice(last), gold };
}

/** `perLocale` documents per locale: each positive template `rounds` times, the negatives in between. */
export function generatedDocs(seed: number, rounds: number, stats: DrawStats): EvalDoc[] {
  const docs: EvalDoc[] = [];
  for (const [locale, loc] of Object.entries(LOCALES)) {
    const f = loc.faker;
    f.seed(seed);
    const templates = TEMPLATES[locale];
    if (!templates) continue;
    for (let r = 0; r < rounds; r++) {
      templates.positives.forEach((t, i) => {
        const first = f.person.firstName();
        const last = f.person.lastName();
        const full = f.datatype.boolean(0.3) ? f.person.fullName({ firstName: first, lastName: last }) : locale === 'ja' ? `${last} ${first}` : `${first} ${last}`;
        const person = { first, last, full };
        const { text, gold } = fill(t, (key) =>
          isPiiType(key) ? { text: piiValue(key, loc, stats, person), type: key } : { text: (NEGATIVE_FILLERS[key] ?? (() => key))(f) },
        );
        docs.push({ id: `gen-${locale}-${r}-p${i}`, locale, source: 'generated', text, gold });
      });
      templates.negatives.forEach((t, i) => {
        const { text } = fill(t, (key) => ({ text: (NEGATIVE_FILLERS[key] ?? (() => key))(f) }));
        docs.push({ id: `gen-${locale}-${r}-n${i}`, locale, source: 'generated', text, gold: [] });
      });
    }
  }
  return docs;
}
