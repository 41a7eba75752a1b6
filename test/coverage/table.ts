import { BENIGN, uEscape, VARIANTS, type Variant } from './payloads';

/**
 * The coverage table: rows of fields (per wire) × variants of payloads (payloads.ts), crossed into cases.
 * A case builds the smuggled body and its control body (both serialised here, so the serialisation-level
 * variants, JSON escapes and duplicate keys, apply to any field). A variant a field cannot carry is
 * listed in the row's `excluded` with the reason; a case that cannot be built and is not listed throws.
 */

export type Json = Record<string, any>;

export interface FieldRow {
  label: string;
  /** A valid body (request, response, or the chunk choices of a stream) with `t` at this field. */
  build: (t: string) => Json;
  /** For a field that is a JSON document inside a string: the body with that document's text. */
  withArgs?: (args: string) => Json;
  /** Variant id → why this field cannot carry it. */
  excluded?: Record<string, string>;
}

export interface Case {
  row: FieldRow;
  variant: Variant;
  /** The body carrying the smuggled payload, and the control body, as values (serialise with `serialize`). */
  attack: Json;
  control: Json;
  /** Serialisation options of the attack and of the control. */
  options: SerializeOptions;
  controlOptions: SerializeOptions;
}

export interface SerializeOptions {
  /** Every string value spelled entirely with `\u` escapes. */
  escapeAll?: boolean;
  /** Every object key whose string value (or string array element) touches the payload is repeated with a harmless copy. */
  duplicateOf?: string;
}

/** Whether a string carries (part of) the payload: contains a WINDOW-character slice of it, or is a piece of it. */
const WINDOW = 6;
export function touches(s: string, payload: string): boolean {
  if (s.length >= 3 && payload.includes(s)) return true;
  for (let i = 0; i + WINDOW <= payload.length; i++) if (s.includes(payload.slice(i, i + WINDOW))) return true;
  return false;
}

const HARMLESS = 'harmless';
/** Why the `doc` variant leaves out every other field. */
export const DOC_ONLY = 'not a JSON document inside a string (the body-level \\u variant covers its escapes)';

/** JSON text of `value` with the case's serialisation-level smuggling applied (JSON.stringify otherwise). */
export function serialize(value: unknown, options: SerializeOptions = {}): string {
  if (!options.escapeAll && !options.duplicateOf) return JSON.stringify(value);
  const str = (s: string) => (options.escapeAll ? `"${uEscape(s)}"` : JSON.stringify(s));
  const carrying = (v: unknown) =>
    options.duplicateOf !== undefined &&
    (typeof v === 'string' ? touches(v, options.duplicateOf) : Array.isArray(v) && v.some((e) => typeof e === 'string' && touches(e, options.duplicateOf!)));
  const write = (v: unknown): string => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    const members: string[] = [];
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      members.push(`${JSON.stringify(k)}:${write(x)}`);
      if (carrying(x)) members.push(`${JSON.stringify(k)}:${write(typeof x === 'string' ? HARMLESS : [HARMLESS])}`);
    }
    return `{${members.join(',')}}`;
  };
  return write(value);
}

/** Whether serialising with `options` actually changes anything (a duplicate key needs a key to repeat). */
function applies(value: Json, options: SerializeOptions): boolean {
  return !options.duplicateOf || serialize(value, options) !== JSON.stringify(value);
}

function buildCase(row: FieldRow, variant: Variant, wireExcluded: Record<string, string>): Case | string {
  const excluded = row.excluded?.[variant.id] ?? wireExcluded[variant.id];
  if (excluded) return excluded;
  switch (variant.kind) {
    case 'text':
      return { row, variant, attack: row.build(variant.smuggle(variant.payload)), control: row.build(variant.control(BENIGN)), options: {}, controlOptions: {} };
    case 'body':
      return { row, variant, attack: row.build(variant.payload), control: row.build(BENIGN), options: { escapeAll: true }, controlOptions: { escapeAll: true } };
    case 'doc': {
      if (!row.withArgs) return DOC_ONLY;
      const args = (t: string) => `{"query":"${uEscape(t)}"}`;
      return { row, variant, attack: row.withArgs(args(variant.payload)), control: row.withArgs(args(BENIGN)), options: {}, controlOptions: {} };
    }
    case 'duplicate-key': {
      const attack = row.build(variant.payload);
      const options = { duplicateOf: variant.payload };
      if (!applies(attack, options)) throw new Error(`${row.label}: no key carries the payload; list the duplicate-key variant in excluded`);
      return { row, variant, attack, control: row.build(BENIGN), options, controlOptions: {} };
    }
  }
}

export interface Table {
  cases: Case[];
  /** [field, variant, reason] of every pair left out. */
  excluded: Array<[string, string, string]>;
}

/** The cross product of `rows` × `variants`, with the exclusions listed (`wireExcluded`: variant id → why no field of this wire carries it). */
export function crossTable(rows: FieldRow[], variants: Variant[] = VARIANTS, wireExcluded: Record<string, string> = {}): Table {
  const table: Table = { cases: [], excluded: [] };
  for (const row of rows) {
    for (const variant of variants) {
      const c = buildCase(row, variant, wireExcluded);
      if (typeof c === 'string') table.excluded.push([row.label, variant.id, c]);
      else table.cases.push(c);
    }
  }
  return table;
}

/**
 * The cases a default run checks. The whole cross product is thousands of requests; by default each
 * variant runs on every STRIDE-th field that can carry it (offset by the variant's position, so the
 * fields rotate between variants) and every field runs with the first variant (its plain payload):
 * every field and every variant is checked on each run, and each pair on a COVERAGE_FULL=1 run
 * (`npm run test:coverage-full`). Deterministic: the same pairs every run.
 */
export const STRIDE = process.env.COVERAGE_FULL === '1' ? 1 : 6;
/** Per-field test timeout: a full run sends four times the requests. */
export const FIELD_TIMEOUT_MS = STRIDE === 1 ? 300_000 : 60_000;

export function sampled(table: Table, variants: Variant[] = VARIANTS): Case[] {
  return variants.flatMap((variant, j) => {
    const applicable = table.cases.filter((c) => c.variant === variant);
    return applicable.filter((_c, k) => j === 0 || k % STRIDE === j % STRIDE % Math.min(STRIDE, applicable.length));
  });
}

/**
 * Runs `check` for every case, `concurrency` at a time, and returns one line per failure (the field,
 * the variant, the payload and what went wrong), so a failing row names exactly what got through.
 */
export async function runCases(cases: Case[], check: (c: Case, tag: string) => Promise<void>, concurrency = 4): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const c = cases[i]!;
      try {
        await check(c, `cov-${i}-${Math.random().toString(36).slice(2, 8)}`);
      } catch (err) {
        const smuggled = c.variant.kind === 'text' ? c.variant.smuggle(c.variant.payload) : c.variant.payload;
        failures.push(`${c.row.label} × ${c.variant.id} (payload ${JSON.stringify(smuggled)}): ${(err as Error).message.split('\n').slice(0, 6).join(' ')}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failures;
}
