/**
 * List prices used for `cost_limit_per_day_cents`, in USD per 1 million tokens (standard tier: no
 * batch, prompt-cache or long-context pricing). Sources: the OpenAI API pricing page
 * (platform.openai.com/docs/pricing) and Anthropic's pricing page (docs.anthropic.com, "Pricing"),
 * checked 2025-11. A model matches the longest prefix below (dated snapshots such as
 * `gpt-4o-2024-08-06` or `claude-sonnet-4-5-20250929` inherit their family's price); anything else is
 * priced at DEFAULT_PRICE, deliberately high so an unknown model cannot slip under a spending cap.
 */
export interface Price {
  inputPerMillion: number;
  outputPerMillion: number;
}

export const PRICES: Readonly<Record<string, Price>> = {
  // OpenAI
  'gpt-5-pro': { inputPerMillion: 15, outputPerMillion: 120 },
  'gpt-5-nano': { inputPerMillion: 0.05, outputPerMillion: 0.4 },
  'gpt-5-mini': { inputPerMillion: 0.25, outputPerMillion: 2 },
  'gpt-5': { inputPerMillion: 1.25, outputPerMillion: 10 },
  'gpt-4.5': { inputPerMillion: 75, outputPerMillion: 150 },
  'gpt-4.1-nano': { inputPerMillion: 0.1, outputPerMillion: 0.4 },
  'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 },
  'gpt-4.1': { inputPerMillion: 2, outputPerMillion: 8 },
  'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
  'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
  'chatgpt-4o': { inputPerMillion: 5, outputPerMillion: 15 },
  'gpt-4-turbo': { inputPerMillion: 10, outputPerMillion: 30 },
  'gpt-4-32k': { inputPerMillion: 60, outputPerMillion: 120 },
  'gpt-4': { inputPerMillion: 30, outputPerMillion: 60 },
  'gpt-3.5-turbo': { inputPerMillion: 0.5, outputPerMillion: 1.5 },
  'o1-pro': { inputPerMillion: 150, outputPerMillion: 600 },
  'o1-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4 },
  o1: { inputPerMillion: 15, outputPerMillion: 60 },
  'o3-pro': { inputPerMillion: 20, outputPerMillion: 80 },
  'o3-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4 },
  o3: { inputPerMillion: 2, outputPerMillion: 8 },
  'o4-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4 },
  // Anthropic
  'claude-opus-4-6': { inputPerMillion: 5, outputPerMillion: 25 },
  'claude-opus-4-5': { inputPerMillion: 5, outputPerMillion: 25 },
  'claude-opus-4': { inputPerMillion: 15, outputPerMillion: 75 },
  'claude-sonnet-4': { inputPerMillion: 3, outputPerMillion: 15 },
  'claude-haiku-4': { inputPerMillion: 1, outputPerMillion: 5 },
  'claude-3-7-sonnet': { inputPerMillion: 3, outputPerMillion: 15 },
  'claude-3-5-sonnet': { inputPerMillion: 3, outputPerMillion: 15 },
  'claude-3-5-haiku': { inputPerMillion: 0.8, outputPerMillion: 4 },
  'claude-3-opus': { inputPerMillion: 15, outputPerMillion: 75 },
  'claude-3-haiku': { inputPerMillion: 0.25, outputPerMillion: 1.25 },
};

/** Unknown models (and /v1/detect, which has none, is never charged). */
export const DEFAULT_PRICE: Price = { inputPerMillion: 10, outputPerMillion: 30 };

const BY_LENGTH = Object.keys(PRICES).sort((a, b) => b.length - a.length);

/** The price of a model: longest matching prefix (case-insensitive; `ft:`, `openai/`, `anthropic/` ignored). */
export function priceOf(model: string | null | undefined): Price {
  const m = (model ?? '').toLowerCase().replace(/^ft:/, '').replace(/^(openai|anthropic)\//, '');
  const prefix = BY_LENGTH.find((p) => m.startsWith(p));
  return prefix ? PRICES[prefix]! : DEFAULT_PRICE;
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
