import { z } from 'zod';
import { ConfigError, readJsonSettingFile } from '../../shared/config';
import SHIPPED_FILE from './prices.json';

/**
 * List prices used for `cost_limit_per_day_cents`, in USD per 1 million tokens (standard tier: no
 * batch, prompt-cache or long-context pricing). The table is data: prices.json beside this file (its
 * `checked` field says when it was last compared with the providers' pricing pages), and an operator's
 * PRICES_FILE adds models or replaces their prices without a release (docs/configuration.md, "Prices").
 * A model matches the longest prefix (dated snapshots such as `gpt-4o-2024-08-06` or
 * `claude-sonnet-4-5-20250929` inherit their family's price); anything else is priced at the table's
 * default, deliberately high so an unknown model cannot slip under a spending cap.
 */
export interface Price {
  inputPerMillion: number;
  outputPerMillion: number;
}

const usd = z.number({ error: 'must be a number (USD per 1 million tokens)' }).finite().min(0, 'must be 0 or more');
const priceSchema = z.strictObject({ input_per_million: usd, output_per_million: usd });
/** prices.json, and a PRICES_FILE (whose every field is optional: it overrides the shipped table). */
const fileSchema = z.strictObject({
  checked: z.string().min(1).optional(),
  unit: z.string().optional(),
  sources: z.array(z.string()).optional(),
  matching: z.string().optional(),
  default: priceSchema.optional(),
  models: z
    .record(z.string().regex(/^[a-z0-9][a-z0-9._:/-]*$/, 'a model prefix is lower-case letters, digits and . _ : / -'), priceSchema)
    .optional(),
});

type PriceFile = z.infer<typeof fileSchema>;

const toPrice = (p: z.infer<typeof priceSchema>): Price => ({ inputPerMillion: p.input_per_million, outputPerMillion: p.output_per_million });

/** A price table: the shipped one, or the shipped one with an operator's PRICES_FILE on top. */
export class PriceTable {
  private readonly byLength: string[];

  constructor(
    readonly models: Readonly<Record<string, Price>>,
    readonly defaultPrice: Price,
    /** When the table was last checked (prices.json `checked`, or the PRICES_FILE's). */
    readonly checked: string,
  ) {
    this.byLength = Object.keys(models).sort((a, b) => b.length - a.length);
  }

  /** The price of a model: longest matching prefix (case-insensitive; `ft:`, `openai/`, `anthropic/` ignored). */
  priceOf(model: string | null | undefined): Price {
    const m = (model ?? '').toLowerCase().replace(/^ft:/, '').replace(/^(openai|anthropic)\//, '');
    const prefix = this.byLength.find((p) => m.startsWith(p));
    return prefix ? this.models[prefix]! : this.defaultPrice;
  }

  /** This table with `file`'s models added or replaced, and its default when it has one. */
  withOverrides(file: PriceFile): PriceTable {
    const models = { ...this.models };
    for (const [prefix, price] of Object.entries(file.models ?? {})) models[prefix] = toPrice(price);
    return new PriceTable(models, file.default ? toPrice(file.default) : this.defaultPrice, file.checked ?? this.checked);
  }
}

function parsePriceFile(raw: unknown, where: string): PriceFile {
  const parsed = fileSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new ConfigError(parsed.error.issues.map((i) => `${where}: ${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`));
}

const shipped = parsePriceFile(SHIPPED_FILE, 'src/gateway/limits/prices.json');
if (!shipped.models || !shipped.default || !shipped.checked) throw new Error('prices.json must have checked, default and models');

/** The table shipped with this release (prices.json). */
export const SHIPPED_PRICES = new PriceTable(Object.fromEntries(Object.entries(shipped.models).map(([k, v]) => [k, toPrice(v)])), toPrice(shipped.default), shipped.checked);

/** Unknown models (and /v1/detect, which has none, is never charged), in the shipped table. */
export const DEFAULT_PRICE: Price = SHIPPED_PRICES.defaultPrice;

/**
 * The price table in force: the shipped one, with the operator's PRICES_FILE (JSON, the shape of
 * prices.json, every field optional) on top. A missing, unreadable or invalid file is a ConfigError
 * naming the file and the field, so the process refuses to start rather than charge wrong prices.
 */
export function loadPriceTable(file: string | undefined): PriceTable {
  if (!file) return SHIPPED_PRICES;
  return SHIPPED_PRICES.withOverrides(parsePriceFile(readJsonSettingFile('PRICES_FILE', file), `PRICES_FILE ${file}`));
}

/** The price of a model in the shipped table (LimitsService uses the table in force). */
export function priceOf(model: string | null | undefined): Price {
  return SHIPPED_PRICES.priceOf(model);
}

/**
 * Cost of `tokens` at `usdPerMillion`, in micro-cents (10⁻⁶ ¢, integers so Redis can add them
 * exactly), rounded up. 1 token at $1 / 1M tokens = 100 µ¢.
 */
export function costMicroCents(tokens: number, usdPerMillion: number): number {
  // Price in nano-cents per token is an integer for every price with up to 5 decimals.
  const nanoCentsPerToken = Math.round(usdPerMillion * 100_000);
  return Math.ceil((tokens * nanoCentsPerToken) / 1000);
}

export const MICRO_CENTS_PER_CENT = 1_000_000;
