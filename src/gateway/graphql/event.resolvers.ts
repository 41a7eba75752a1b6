import { listEventsQuerySchema, listSessionsQuerySchema } from '../../management/events/event.schemas';
import type { EventView, SessionSummaryView } from '../../management/events/event.service';
import type { Page } from '../../management/views';
import { parseInput, toQueryParams, type Resolver } from './resolver-helpers';

/** Audit events and per-session summaries: each resolver calls the service method its REST route calls. */

type EventsArgs = {
  limit?: number | null;
  offset?: number | null;
  path?: string | null;
  session_id?: string | null;
  request_id?: string | null;
  project_id?: string | null;
  blocked?: boolean | null;
  since?: string | null;
  until?: string | null;
};
type SessionsArgs = Pick<EventsArgs, 'limit' | 'offset' | 'project_id' | 'since' | 'until'>;

const events: Resolver<EventsArgs, Page<EventView>> = (_p, args, ctx) =>
  ctx.services.events.list(ctx.organizationId, parseInput(listEventsQuerySchema, toQueryParams(args)));

const sessions: Resolver<SessionsArgs, Page<SessionSummaryView>> = (_p, args, ctx) =>
  ctx.services.events.sessions(ctx.organizationId, parseInput(listSessionsQuerySchema, toQueryParams(args)));

export const eventResolvers = {
  Query: { events, sessions },
};
