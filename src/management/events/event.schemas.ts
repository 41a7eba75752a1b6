import { z } from 'zod';
import { booleanQueryParam, pagingSchema } from '../policies/policy.schemas';
import { storableText } from '../../shared/storable-text';

export const timestamp = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp, e.g. 2026-11-22T12:00:00Z' });

/** Filters of GET /v1/events/ (and the GraphQL events query). */
export const listEventsQuerySchema = z.strictObject({
  ...pagingSchema,
  path: storableText(z.string().max(512)).optional(),
  session_id: storableText(z.string().max(128)).optional(),
  request_id: storableText(z.string().max(128)).optional(),
  project_id: z.uuid('must be a UUID').optional(),
  blocked: booleanQueryParam.optional(),
  since: timestamp.optional(),
  until: timestamp.optional(),
});
export type ListEventsQuery = z.infer<typeof listEventsQuerySchema>;

export const listSessionsQuerySchema = z.strictObject({
  ...pagingSchema,
  project_id: z.uuid('must be a UUID').optional(),
  since: timestamp.optional(),
  until: timestamp.optional(),
});
export type ListSessionsQuery = z.infer<typeof listSessionsQuerySchema>;
