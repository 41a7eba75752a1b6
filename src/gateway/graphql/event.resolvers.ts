import { eventStatsQuerySchema, listEventsQuerySchema, listSessionsQuerySchema } from '../../management/events/event.schemas';
import type { EventStatsView, EventView, SessionSummaryView } from '../../management/events/event.service';
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
  decision?: string | null;
  detector?: string | null;
  since?: string | null;
  until?: string | null;
};
type StatsArgs = Omit<EventsArgs, 'limit' | 'offset'> & { bucket_seconds?: number | null; top?: number | null };
type SessionsArgs = Pick<EventsArgs, 'limit' | 'offset' | 'project_id' | 'since' | 'until'>;

const events: Resolver<EventsArgs, Page<EventView>> = (_p, args, ctx) =>
  ctx.services.events.list(ctx.organizationId, parseInput(listEventsQuerySchema, toQueryParams(args)));

const eventStats: Resolver<StatsArgs, EventStatsView> = (_p, args, ctx) =>
  ctx.services.events.stats(ctx.organizationId, parseInput(eventStatsQuerySchema, toQueryParams(args)));

const sessions: Resolver<SessionsArgs, Page<SessionSummaryView>> = (_p, args, ctx) =>
  ctx.services.events.sessions(ctx.organizationId, parseInput(listSessionsQuerySchema, toQueryParams(args)));

export const eventResolvers = {
  Query: { events, event_stats: eventStats, sessions },
};
