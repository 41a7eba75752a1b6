import { isSupportedCountry } from 'libphonenumber-js';
import { z } from 'zod';
import { DETECTOR_TYPES } from './detector-catalog';
import { storableText } from './storable-text';

/**
 * Policy value types shared by storage, management, gateway and the detection client. One zod schema
 * per shape; TypeScript types come from them.
 */

export const policyModeSchema = z.enum(['IO', 'I', 'O']);
export const thresholdSchema = z.enum(['L1', 'L2', 'L3', 'L4']);
export const actionSchema = z.enum(['block', 'log', 'alert']);
export const directionSchema = z.enum(['input', 'output']);
export const matchTypeSchema = z.enum(['contains', 'exact', 'regex']);
export const detectorTypeSchema = z.enum(DETECTOR_TYPES);

export type PolicyMode = z.infer<typeof policyModeSchema>;
export type Threshold = z.infer<typeof thresholdSchema>;
export type Action = z.infer<typeof actionSchema>;
export type Direction = z.infer<typeof directionSchema>;
export type MatchType = z.infer<typeof matchTypeSchema>;

/**
 * unscannable: what happens to request content no detector can read (images, audio, PDFs, file
 * references, binary documents). Unset (null) = `block` when any of the policy's detectors (input,
 * output or custom) has the block action, else `allow` (effectiveUnscannable).
 */
export const unscannableSchema = z.enum(['block', 'allow']);
export type Unscannable = z.infer<typeof unscannableSchema>;

export const detectorEntrySchema = z.strictObject({
  detector_type: detectorTypeSchema,
  threshold: thresholdSchema.default('L2'),
  action: actionSchema.default('block'),
});
export type DetectorEntry = z.infer<typeof detectorEntrySchema>;

export const matchListSchema = z.strictObject({
  entries: z.array(storableText(z.string().min(1).max(1024))).max(1000).default([]),
  match_type: matchTypeSchema.default('contains'),
});
export type MatchList = z.infer<typeof matchListSchema>;

export const customDetectorSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9][a-z0-9_-]*$/, 'name must be lowercase letters, digits, "_" or "-"'),
  pattern: storableText(z.string().min(1).max(1024)),
  action: actionSchema.default('block'),
});
export type CustomDetector = z.infer<typeof customDetectorSchema>;

/**
 * pii_regions: the regions (ISO 3166-1 alpha-2, upper case) whose NATIONAL phone formats pii/phone_number
 * recognises ("020 7946 0958" for GB, "06 12 34 56 78" for FR). Numbers written with "+CC" or "00CC" are
 * recognised for every country whatever this list says. Each code must be one libphonenumber-js has
 * numbering metadata for (all assigned codes that have a telephone numbering plan).
 */
export const DEFAULT_PII_REGIONS = [
  'US', 'CA', 'GB', 'IE', 'DE', 'AT', 'CH', 'FR', 'BE', 'NL', 'ES', 'PT', 'IT', 'SE', 'PL', 'JP', 'IN', 'AU', 'BR', 'MX',
] as const;
export const MAX_PII_REGIONS = 50;

export const piiRegionSchema = z.string().superRefine((code, ctx) => {
  if (!/^[A-Z]{2}$/.test(code)) {
    const hint = /^[a-z]{2}$/.test(code) ? ` (codes are upper case: "${code.toUpperCase()}")` : '';
    ctx.addIssue({ code: 'custom', message: `"${code}" is not an ISO 3166-1 alpha-2 region code${hint}` });
  } else if (!isSupportedCountry(code)) {
    ctx.addIssue({ code: 'custom', message: `"${code}" is not an ISO 3166-1 alpha-2 region code with a telephone numbering plan` });
  }
});

export const piiRegionsSchema = z
  .array(piiRegionSchema)
  .min(1, 'must list at least one region')
  .max(MAX_PII_REGIONS)
  .superRefine((codes, ctx) => {
    const seen = new Set<string>();
    codes.forEach((c, i) => {
      if (seen.has(c)) ctx.addIssue({ code: 'custom', path: [i], message: `"${c}" is listed twice` });
      seen.add(c);
    });
  });

export const rateLimitsSchema = z.strictObject({
  rate_limits_enabled: z.boolean().default(false),
  requests_per_minute: z.number().int().min(1).max(1_000_000).default(60),
  tokens_per_minute: z.number().int().min(1).max(1_000_000_000).default(100_000),
  max_input_tokens: z.number().int().min(1).max(10_000_000).default(8192),
  max_input_characters: z.number().int().min(1).max(100_000_000).default(64_000),
  max_output_tokens: z.number().int().min(1).max(10_000_000).default(4096),
  burst_multiplier: z.number().min(1).max(100).default(2.0),
  cost_limit_per_day_cents: z.number().int().min(0).max(1_000_000_000).default(0),
});
export type RateLimits = z.infer<typeof rateLimitsSchema>;

export const DEFAULT_RATE_LIMITS: RateLimits = rateLimitsSchema.parse({});
export const EMPTY_MATCH_LIST: MatchList = { entries: [], match_type: 'contains' };

/** What the detection service needs to evaluate a text: everything of a policy that affects a verdict. */
export interface DetectionPolicy {
  /** Identifies the policy version so detection can cache compiled patterns (e.g. `${id}:${updatedAt}`). */
  cacheKey: string;
  policyMode: PolicyMode;
  inputDetectors: DetectorEntry[];
  outputDetectors: DetectorEntry[];
  allowList: MatchList;
  denyList: MatchList;
  customDetectors: CustomDetector[];
  /** Regions whose national phone formats pii/phone_number reads; undefined or empty = DEFAULT_PII_REGIONS. */
  piiRegions?: readonly string[];
}

/** The unscannable mode a policy applies: its own setting, else `block` when any detector blocks. */
export function effectiveUnscannable(p: {
  unscannable: Unscannable | null | undefined;
  inputDetectors: readonly { action: Action }[];
  outputDetectors: readonly { action: Action }[];
  customDetectors: readonly { action: Action }[];
}): Unscannable {
  if (p.unscannable) return p.unscannable;
  const blocks = [...p.inputDetectors, ...p.outputDetectors, ...p.customDetectors].some((d) => d.action === 'block');
  return blocks ? 'block' : 'allow';
}

/** The detectors a fresh organization's default policy starts with (bootstrap). */
export const STARTER_INPUT_DETECTORS: DetectorEntry[] = [
  { detector_type: 'prompt_attack', threshold: 'L2', action: 'block' },
  { detector_type: 'jailbreak', threshold: 'L2', action: 'block' },
  { detector_type: 'pii/credit_card', threshold: 'L2', action: 'block' },
  { detector_type: 'pii/us_social_security_number', threshold: 'L2', action: 'block' },
  { detector_type: 'pii/iban_code', threshold: 'L2', action: 'block' },
  { detector_type: 'pii/email', threshold: 'L2', action: 'log' },
  { detector_type: 'pii/phone_number', threshold: 'L2', action: 'log' },
];

export const STARTER_OUTPUT_DETECTORS: DetectorEntry[] = [
  { detector_type: 'pii/credit_card', threshold: 'L2', action: 'block' },
  { detector_type: 'pii/us_social_security_number', threshold: 'L2', action: 'block' },
  { detector_type: 'pii/email', threshold: 'L2', action: 'log' },
  { detector_type: 'unknown_links', threshold: 'L2', action: 'log' },
];
