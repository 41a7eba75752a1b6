import { z } from 'zod';
import { pagingSchema } from '../policies/policy.schemas';
import { storableText } from '../../shared/storable-text';
import { timestamp } from '../events/event.schemas';

export const MANAGEMENT_ENTITY_TYPES = ['policy', 'project'] as const;
export const MANAGEMENT_ACTIONS = ['create', 'update', 'delete', 'duplicate', 'set_default', 'unset_default', 'rotate_key'] as const;

/** Filters of GET /v1/management_events/ (and the GraphQL management_events query). */
export const listManagementEventsQuerySchema = z.strictObject({
  ...pagingSchema,
  entity_type: z.enum(MANAGEMENT_ENTITY_TYPES, { error: `must be one of ${MANAGEMENT_ENTITY_TYPES.join(', ')}` }).optional(),
  entity_id: z.uuid('must be a UUID').optional(),
  action: z.enum(MANAGEMENT_ACTIONS, { error: `must be one of ${MANAGEMENT_ACTIONS.join(', ')}` }).optional(),
  actor_project_id: z.uuid('must be a UUID').optional(),
  request_id: storableText(z.string().min(1).max(128)).optional(),
  since: timestamp.optional(),
  until: timestamp.optional(),
});
export type ListManagementEventsQuery = z.infer<typeof listManagementEventsQuerySchema>;
