import RE2 from 're2';
import { z } from 'zod';
import {
  actionSchema,
  customDetectorSchema,
  detectorEntrySchema,
  matchListSchema,
  DEFAULT_PII_REGIONS,
  piiRegionsSchema,
  policyModeSchema,
  rateLimitsSchema,
  unscannableSchema,
} from '../../shared/policy';
import { storableText } from '../../shared/storable-text';

/**
 * Request schemas of the policy operations: one per operation, shared by REST and GraphQL. Sizes are
 * bounded so no request can make the store or the detector explode.
 */

export const MAX_DETECTORS_PER_DIRECTION = 64;
export const MAX_CUSTOM_DETECTORS = 50;

function re2Compiles(pattern: string): string | null {
  try {
    new RE2(pattern, 'u');
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const detectorList = z
  .array(detectorEntrySchema)
  .max(MAX_DETECTORS_PER_DIRECTION)
  .superRefine((entries, ctx) => {
    const seen = new Map<string, number>();
    entries.forEach((e, i) => {
      const first = seen.get(e.detector_type);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'detector_type'],
          message: `"${e.detector_type}" is already listed at index ${first}; each detector type may appear once per direction`,
        });
      } else seen.set(e.detector_type, i);
    });
  });

/** A match list whose regex entries (match_type regex) must compile with RE2. */
const matchList = matchListSchema.superRefine((list, ctx) => {
  if (list.match_type !== 'regex') return;
  list.entries.forEach((entry, i) => {
    const problem = re2Compiles(entry);
    if (problem) ctx.addIssue({ code: 'custom', path: ['entries', i], message: `not a valid RE2 pattern: ${problem}` });
  });
});

const customDetectors = z
  .array(customDetectorSchema)
  .max(MAX_CUSTOM_DETECTORS)
  .superRefine((list, ctx) => {
    const names = new Set<string>();
    list.forEach((d, i) => {
      if (names.has(d.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${d.name}" is used twice` });
      names.add(d.name);
      const problem = re2Compiles(d.pattern);
      if (problem) ctx.addIssue({ code: 'custom', path: [i, 'pattern'], message: `not a valid RE2 pattern: ${problem}` });
    });
  });

const name = storableText(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'));

/**
 * rate_limits in a request: any subset; missing fields take the spec's defaults (create) or keep their
 * value (update). Built from the fields without their defaults: zod 4 applies a default even inside
 * `.partial()`, which would silently reset every field a PATCH does not name.
 */
const rl = rateLimitsSchema.shape;
export const rateLimitsPatchSchema = z.strictObject({
  rate_limits_enabled: rl.rate_limits_enabled.unwrap().optional(),
  requests_per_minute: rl.requests_per_minute.unwrap().optional(),
  tokens_per_minute: rl.tokens_per_minute.unwrap().optional(),
  max_input_tokens: rl.max_input_tokens.unwrap().optional(),
  max_input_characters: rl.max_input_characters.unwrap().optional(),
  max_output_tokens: rl.max_output_tokens.unwrap().optional(),
  burst_multiplier: rl.burst_multiplier.unwrap().optional(),
  cost_limit_per_day_cents: rl.cost_limit_per_day_cents.unwrap().optional(),
});
// A field added to rateLimitsSchema but not here fails to compile.
const _everyRateLimitPatchable: Record<keyof z.infer<typeof rateLimitsSchema>, unknown> = rateLimitsPatchSchema.shape;
void _everyRateLimitPatchable;

export const createPolicySchema = z.strictObject({
  name,
  policy_mode: policyModeSchema.default('IO'),
  input_detectors: detectorList.default([]),
  output_detectors: detectorList.default([]),
  allow_list: matchList.default({ entries: [], match_type: 'contains' }),
  deny_list: matchList.default({ entries: [], match_type: 'contains' }),
  custom_detectors: customDetectors.default([]),
  pii_regions: piiRegionsSchema.default([...DEFAULT_PII_REGIONS]),
  /** null or absent: automatic (block when any detector blocks). */
  unscannable: unscannableSchema.nullable().default(null),
  rate_limits: rateLimitsPatchSchema.default({}),
});
export type CreatePolicyInput = z.infer<typeof createPolicySchema>;

export const updatePolicySchema = z.strictObject({
  name: name.optional(),
  policy_mode: policyModeSchema.optional(),
  input_detectors: detectorList.optional(),
  output_detectors: detectorList.optional(),
  allow_list: matchList.optional(),
  deny_list: matchList.optional(),
  custom_detectors: customDetectors.optional(),
  pii_regions: piiRegionsSchema.optional(),
  /** null: back to automatic. */
  unscannable: unscannableSchema.nullable().optional(),
  rate_limits: rateLimitsPatchSchema.optional(),
});
export type UpdatePolicyInput = z.infer<typeof updatePolicySchema>;

/** A query-string boolean: exactly "true" or "false". */
export const booleanQueryParam = z.enum(['true', 'false']).transform((v) => v === 'true');

export const pagingSchema = {
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

export const listPoliciesQuerySchema = z.strictObject({
  ...pagingSchema,
  name: storableText(z.string().max(200)).optional(),
  is_default: booleanQueryParam.optional(),
  policy_mode: policyModeSchema.optional(),
});
export type ListPoliciesQuery = z.infer<typeof listPoliciesQuerySchema>;

export { actionSchema };
