import { GraphQLScalarType, Kind } from 'graphql';
import type { ManagementEventView } from '../../management/audit-trail/management-trail';
import { listManagementEventsQuerySchema } from '../../management/audit-trail/management-trail.schemas';
import type { Page } from '../../management/views';
import { parseInput, toQueryParams, type Resolver } from './resolver-helpers';

/** The management audit trail: the resolver calls the service method GET /v1/management_events/ calls. */

type ManagementEventsArgs = {
  limit?: number | null;
  offset?: number | null;
  entity_type?: string | null;
  entity_id?: string | null;
  action?: string | null;
  actor_project_id?: string | null;
  request_id?: string | null;
  since?: string | null;
  until?: string | null;
};

const managementEvents: Resolver<ManagementEventsArgs, Page<ManagementEventView>> = (_p, args, ctx) =>
  ctx.services.trail.list(ctx.organizationId, parseInput(listManagementEventsQuerySchema, toQueryParams(args)));

/** Output-only JSON object scalar (the before / after snapshots); as an input it is refused. */
const JSONObject = new GraphQLScalarType({
  name: 'JSONObject',
  description: 'A JSON object, returned as is.',
  serialize: (value) => value,
  parseValue: () => {
    throw new TypeError('JSONObject is an output type only');
  },
  parseLiteral: (ast) => {
    throw new TypeError(`JSONObject is an output type only (got ${ast.kind === Kind.OBJECT ? 'an object' : ast.kind})`);
  },
});

export const managementEventResolvers = {
  JSONObject,
  Query: { management_events: managementEvents },
};
