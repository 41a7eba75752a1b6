import { z } from 'zod';
import { detectionPolicyOf } from '../../management/projects/project-auth.service';
import type { PolicyView } from '../../management/views';
import { explainVerdict, type ExplainedCategory } from '../../shared/explain/verdict-matches';
import { directionSchema } from '../../shared/policy';
import { unscannedOf } from '../../shared/http/risk-headers';
import { detectBodySchema } from '../routes/detect.routes';
import { parseInput, toQueryParams, type Resolver } from './resolver-helpers';

/**
 * The console's playground: `detect(policy_id, content, direction)` scans a text with one of the
 * organization's policies, on the detection path of POST /v1/detect (same client, same policy form,
 * same explanation of the verdict), and records no security event (a trial run is not traffic).
 */

const detectArgsSchema = detectBodySchema.extend({ policy_id: z.uuid('must be a UUID'), direction: directionSchema.default('input') });

type DetectArgs = { policy_id: string; content: string; direction?: string | null };
type DetectAnswer = { blocked: boolean; categories: ExplainedCategory[]; unscanned: string[]; policy: PolicyView };

const detect: Resolver<DetectArgs, DetectAnswer> = async (_p, args, ctx) => {
  const input = parseInput(detectArgsSchema, toQueryParams(args));
  const policy = await ctx.loaders.policy.load(input.policy_id);
  const verdict = await ctx.services.detection.detect({
    text: input.content,
    direction: input.direction,
    policy: detectionPolicyOf(policy),
    requestId: ctx.requestId,
  });
  // One field, `content`: the finding offsets are already offsets into it (as on /v1/detect).
  const categories = explainVerdict(verdict, (start, end) => [{ path: 'content', start, end }]);
  return { blocked: verdict.blocked, categories, unscanned: unscannedOf(verdict), policy };
};

export const playgroundResolvers = {
  Query: { detect },
};
