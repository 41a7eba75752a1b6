import { z } from 'zod';
import { DETECTOR_TYPES } from './detector-catalog';

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

export const detectorEntrySchema = z.strictObject({
  detector_type: detectorTypeSchema,
  threshold: thresholdSchema.default('L2'),
  action: actionSchema.default('block'),
});
export type DetectorEntry = z.infer<typeof detectorEntrySchema>;

export const matchListSchema = z.strictObject({
  entries: z.array(z.string().min(1).max(1024)).max(1000).default([]),
  match_type: matchTypeSchema.default('contains'),
});
export type MatchList = z.infer<typeof matchListSchema>;

export const customDetectorSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9][a-z0-9_-]*$/, 'name must be lowercase letters, digits, "_" or "-"'),
  pattern: z.string().min(1).max(1024),
  action: actionSchema.default('block'),
});
export type CustomDetector = z.infer<typeof customDetectorSchema>;

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
