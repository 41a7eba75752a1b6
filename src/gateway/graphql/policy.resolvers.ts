import { createPolicySchema, listPoliciesQuerySchema, updatePolicySchema } from '../../management/policies/policy.schemas';
import type { Page, PolicyView } from '../../management/views';
import { afterWrite, parseInput, toQueryParams, type IdArgs, type Resolver } from './resolver-helpers';

/** Policies, detector types and threshold levels: each resolver calls the service method its REST route calls. */

type ListArgs = { limit?: number | null; offset?: number | null; name?: string | null; is_default?: boolean | null; policy_mode?: string | null };
type InputArgs = { input: unknown };
type LookupItem = { value: string; label: string };

const policies: Resolver<ListArgs, Page<PolicyView>> = (_p, args, ctx) =>
  ctx.services.policies.list(ctx.organizationId, parseInput(listPoliciesQuerySchema, toQueryParams(args)));

const policy: Resolver<IdArgs, PolicyView> = async (_p, { id }, ctx) => {
  const found = await ctx.services.policies.get(ctx.organizationId, id);
  ctx.loaders.policy.prime(found.id, found);
  return found;
};

const detectorTypes: Resolver<unknown, Array<LookupItem & { category: string }>> = (_p, _a, ctx) =>
  ctx.services.policies.detectorTypes().detector_types;

const thresholdLevels: Resolver<unknown, LookupItem[]> = (_p, _a, ctx) => ctx.services.policies.thresholdLevels().threshold_levels;

const createPolicy: Resolver<InputArgs, PolicyView> = async (_p, { input }, ctx) =>
  afterWrite(ctx, await ctx.services.policies.create(ctx.actor, parseInput(createPolicySchema, input)));

const updatePolicy: Resolver<IdArgs & InputArgs, PolicyView> = async (_p, { id, input }, ctx) =>
  afterWrite(ctx, await ctx.services.policies.update(ctx.actor, id, parseInput(updatePolicySchema, input)));

/** REST answers 204; GraphQL returns the deleted id (handy for client cache eviction). */
const deletePolicy: Resolver<IdArgs, string> = async (_p, { id }, ctx) => {
  await ctx.services.policies.delete(ctx.actor, id);
  return afterWrite(ctx, id);
};

const duplicatePolicy: Resolver<IdArgs, PolicyView> = async (_p, { id }, ctx) =>
  afterWrite(ctx, await ctx.services.policies.duplicate(ctx.actor, id));

const setDefaultPolicy: Resolver<IdArgs, PolicyView> = async (_p, { id }, ctx) =>
  afterWrite(ctx, await ctx.services.policies.setDefault(ctx.actor, id));

export const policyResolvers = {
  Query: { policies, policy, detector_types: detectorTypes, threshold_levels: thresholdLevels },
  Mutation: { createPolicy, updatePolicy, deletePolicy, duplicatePolicy, setDefaultPolicy },
};
