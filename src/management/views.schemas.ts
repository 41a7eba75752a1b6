import { z } from 'zod';
import {
  actionSchema,
  customDetectorSchema,
  detectorEntrySchema,
  matchListSchema,
  policyModeSchema,
  rateLimitsSchema,
  unscannableSchema,
  type Action,
} from '../shared/policy';
import type { ManagementEventView } from './audit-trail/management-trail';
import { keyScopeSchema } from './projects/project.schemas';
import { decisionSchema } from './events/event.schemas';
import { MANAGEMENT_ACTIONS, MANAGEMENT_ENTITY_TYPES } from './audit-trail/management-trail.schemas';
import type { EventView, SessionSummaryView } from './events/event.service';
import type { CreatedOrganizationView } from './organizations/organization.service';
import type { CreatedProjectView, Page, PolicyView, ProjectView } from './views';

/**
 * zod schemas of the management answers (views.ts), for the OpenAPI document (shared/http/openapi.ts)
 * and the tests that check real answers against it. Strict: a field the API adds but this file does not
 * name fails the compile-time checks below (the view types and these schemas must be the same type).
 */

const timestamp = z.string().meta({ description: 'ISO 8601 timestamp (UTC)' });
const uuid = z.string().meta({ format: 'uuid' });

export const policyViewSchema = z
  .strictObject({
    id: uuid,
    name: z.string(),
    policy_mode: policyModeSchema,
    is_default: z.boolean(),
    input_detectors: z.array(detectorEntrySchema),
    output_detectors: z.array(detectorEntrySchema),
    allow_list: matchListSchema,
    deny_list: matchListSchema,
    custom_detectors: z.array(customDetectorSchema),
    pii_regions: z.array(z.string()),
    unscannable: unscannableSchema.nullable(),
    effective_unscannable: unscannableSchema,
    rate_limits: rateLimitsSchema,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ title: 'Policy' });

export const projectViewSchema = z
  .strictObject({
    id: uuid,
    name: z.string(),
    key_prefix: z.string().meta({ description: 'The first characters of the key, to recognise it; never the key' }),
    environment: z.string(),
    policy_id: uuid.meta({ description: 'The effective policy (the assigned one, or the organization default)' }),
    policy_name: z.string(),
    uses_default_policy: z.boolean(),
    key_scope: keyScopeSchema.meta({ description: '"full": proxy, detect, sensor and management; "traffic": proxy, detect and sensor only (403 on management)' }),
    is_active: z.boolean(),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
  })
  .meta({ title: 'Project' });

export const createdProjectViewSchema = projectViewSchema
  .extend({ raw_key: z.string().meta({ description: 'The full API key: in this response only, never again' }) })
  .meta({ title: 'ProjectWithKey' });

const matchSchema = z.strictObject({ path: z.string(), start: z.number().int(), end: z.number().int(), signal: z.string(), score: z.number() });

export const eventViewSchema = z
  .strictObject({
    id: uuid,
    project_id: uuid.nullable(),
    path: z.string(),
    session_id: z.string().nullable(),
    model: z.string().nullable(),
    input_tokens: z.number().int().nullable(),
    findings: z.array(z.strictObject({ type: z.string(), confidence: z.number(), action: z.string(), matches: z.array(matchSchema) })),
    blocked: z.boolean(),
    decision: decisionSchema.meta({ description: 'blocked; flagged (not blocked, a detector fired); allowed (nothing fired)' }),
    response_status: z.number().int(),
    latency_ms: z.number(),
    fail_reason: z.string().nullable(),
    unscanned_content: z.array(z.string()),
    request_id: z.string().nullable().meta({ description: "The request's X-Request-Id (the client's valid one, else generated); null on events recorded before request ids were stored" }),
    provider: z.string().nullable().meta({ description: 'The upstream provider of the answer (the last one tried; `openai` for the single OPENAI_BASE_URL upstream); null when nothing went upstream or several were asked (GET /v1/models with PROVIDERS_FILE)' }),
    upstream_attempts: z
      .array(
        z.strictObject({
          provider: z.string(),
          model: z.string().nullable().meta({ description: 'The model asked of that provider' }),
          status: z.number().int().nullable().meta({ description: 'The status it answered; null when it did not answer (see error)' }),
          error: z.string().nullable().meta({ description: 'connect_error, connect_timeout, connection_reset, timeout, transport_error or aborted; null when it answered' }),
          duration_ms: z.number(),
        }),
      )
      .meta({ description: 'Every attempt at an upstream provider, in order (retries and fallbacks each add one; docs/providers.md); empty when nothing went upstream' }),
    created_at: timestamp,
  })
  .meta({ title: 'SecurityEvent' });

export const sessionSummaryViewSchema = z
  .strictObject({
    session_id: z.string(),
    count: z.number().int(),
    blocked_count: z.number().int(),
    first_seen: timestamp,
    last_seen: timestamp,
    models: z.array(z.string()),
  })
  .meta({ title: 'SessionSummary' });

/** A page of a list: `{count, results}`; `count` is the total matching the filters. */
export const pageSchema = <T extends z.ZodType>(item: T) => z.strictObject({ count: z.number().int(), results: z.array(item) });

export const detectorTypesSchema = z.strictObject({
  detector_types: z.array(z.strictObject({ value: z.string(), label: z.string(), category: z.string() })),
});
export const thresholdLevelsSchema = z.strictObject({ threshold_levels: z.array(z.strictObject({ value: z.string(), label: z.string() })) });

/** A category of a /v1/detect verdict with its matches (verdict-matches.ts). */
export const detectResponseSchema = z
  .strictObject({
    blocked: z.boolean(),
    categories: z.array(z.strictObject({ type: z.string(), confidence: z.number(), action: actionSchema, matches: z.array(matchSchema) })),
    unscanned: z.array(z.string()).meta({ description: 'Detector types configured but not scanned (failed, timed out or not implemented)' }),
  })
  .meta({ title: 'DetectResult' });

/** A record of the management audit trail (audit-trail/management-trail.ts). */
export const managementEventViewSchema = z
  .strictObject({
    id: z.string(),
    actor: z.strictObject({ project_id: z.string().nullable(), key_prefix: z.string().nullable() }),
    entity_type: z.enum(MANAGEMENT_ENTITY_TYPES),
    entity_id: z.string(),
    action: z.enum(MANAGEMENT_ACTIONS),
    before: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The resource as the API showed it before the change (secrets redacted); null for create and duplicate' }),
    after: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The resource after the change (secrets redacted); null for delete' }),
    changed_fields: z.array(z.string()),
    details: z.record(z.string(), z.unknown()).nullable(),
    request_id: z.string().nullable(),
    via: z.enum(['rest', 'graphql', 'provision']),
    created_at: z.string(),
  })
  .meta({ title: 'ManagementEvent' });

/** The answer of POST /v1/organizations (organizations/organization.service.ts). */
export const createdOrganizationViewSchema = z
  .strictObject({
    id: uuid,
    name: z.string(),
    created_at: timestamp,
    default_policy_id: uuid.meta({ description: "The organization's default policy (the starter detector set)" }),
    project: createdProjectViewSchema.meta({ description: 'The first project (key scope full), with its raw key: in this response only' }),
  })
  .meta({ title: 'CreatedOrganization' });

// Compile-time: each schema's output type and its view type are the same type.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <A, B>(ok: Same<A, B>) => ok;
same<z.output<typeof policyViewSchema>, PolicyView>(true);
same<z.output<typeof projectViewSchema>, ProjectView>(true);
same<z.output<typeof createdProjectViewSchema>, CreatedProjectView>(true);
same<z.output<typeof eventViewSchema>, EventView>(true);
same<z.output<typeof sessionSummaryViewSchema>, SessionSummaryView>(true);
same<z.output<typeof managementEventViewSchema>, ManagementEventView>(true);
same<z.output<typeof createdOrganizationViewSchema>, CreatedOrganizationView>(true);
same<z.output<ReturnType<typeof pageSchema<typeof projectViewSchema>>>, Page<ProjectView>>(true);
same<z.output<typeof detectResponseSchema>['categories'][number]['action'], Action>(true);
