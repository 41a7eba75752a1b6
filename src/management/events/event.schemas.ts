import { z } from 'zod';
import { booleanQueryParam, pagingSchema } from '../policies/policy.schemas';
import { storableText } from '../../shared/storable-text';

export const timestamp = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp, e.g. 2026-11-22T12:00:00Z' });

/**
 * What became of a request: `blocked`; `flagged` (not blocked, but at least one detector fired: a log or
 * alert action, or a finding below the block); `allowed` (not blocked, nothing fired).
 */
export const decisionSchema = z.enum(['blocked', 'flagged', 'allowed']);
export type Decision = z.infer<typeof decisionSchema>;

/** Filters of the event queries (list and stats), without paging. */
const eventFilters = {
  path: storableText(z.string().max(512)).optional(),
  session_id: storableText(z.string().max(128)).optional(),
  request_id: storableText(z.string().max(128)).optional(),
  project_id: z.uuid('must be a UUID').optional(),
  blocked: booleanQueryParam.optional(),
  decision: decisionSchema.optional(),
  /** A finding type that fired: a detector type (`pii/email`), `deny_list` or `custom/<name>`. */
  detector: storableText(z.string().min(1).max(200)).optional(),
  since: timestamp.optional(),
  until: timestamp.optional(),
};

/** Filters of GET /v1/events/ (and the GraphQL events query). */
export const listEventsQuerySchema = z.strictObject({ ...pagingSchema, ...eventFilters });
export type ListEventsQuery = z.infer<typeof listEventsQuerySchema>;

/** The GraphQL event_stats query: the events filters, and the width of a time bucket. */
export const eventStatsQuerySchema = z.strictObject({
  ...eventFilters,
  bucket_seconds: z.coerce.number().int().min(60).max(7 * 86_400).default(3600),
  /** How many detectors the top list holds. */
  top: z.coerce.number().int().min(1).max(50).default(10),
});
export type EventStatsQuery = z.infer<typeof eventStatsQuerySchema>;

export const listSessionsQuerySchema = z.strictObject({
  ...pagingSchema,
  project_id: z.uuid('must be a UUID').optional(),
  since: timestamp.optional(),
  until: timestamp.optional(),
});
export type ListSessionsQuery = z.infer<typeof listSessionsQuerySchema>;
