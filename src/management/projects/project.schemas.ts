import { z } from 'zod';
import { booleanQueryParam, pagingSchema } from '../policies/policy.schemas';
import { storableText } from '../../shared/storable-text';

/** Environments: the spec's production and development, plus staging (most teams run one). */
export const environmentSchema = z.enum(['production', 'staging', 'development']);

/** What a project's key may do: `full` (traffic and management, the default) or `traffic` (proxy, detect, sensor). */
export const keyScopeSchema = z.enum(['full', 'traffic']);

const name = storableText(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'));
const uuid = z.uuid('must be a UUID');

export const createProjectSchema = z.strictObject({
  name,
  environment: environmentSchema.default('production'),
  /** Omitted or null: the project uses the organization default policy. */
  policy_id: uuid.nullable().optional(),
  key_scope: keyScopeSchema.default('full'),
});
export type CreateProjectInput = z.infer<typeof createProjectSchema>;

export const updateProjectSchema = z.strictObject({
  name: name.optional(),
  environment: environmentSchema.optional(),
  /** null: back to the organization default. */
  policy_id: uuid.nullable().optional(),
  is_active: z.boolean().optional(),
  /** `traffic` is not allowed for the calling key's own project (it would lock itself out of management). */
  key_scope: keyScopeSchema.optional(),
});
export type UpdateProjectInput = z.infer<typeof updateProjectSchema>;


export const listProjectsQuerySchema = z.strictObject({
  ...pagingSchema,
  name: storableText(z.string().max(200)).optional(),
  environment: environmentSchema.optional(),
  is_active: booleanQueryParam.optional(),
  policy_id: uuid.optional(),
});
export type ListProjectsQuery = z.infer<typeof listProjectsQuerySchema>;
