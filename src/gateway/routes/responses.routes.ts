import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { auditHooks } from '../../management/events/audit.hook';
import { authOf, requireBearerKey } from '../../management/projects/request-auth';
import type { DetectResult } from '../../shared/detection-client';
import { invalidRequest, notFound } from '../../shared/errors';
import type { TextField } from '../../shared/explain/field-layout';
import { documented, PROXY_ERRORS, relayedAnswer, streamFlag } from '../../shared/http/openapi';
import { abortOnClientClose } from '../../shared/http/upstream';
import { bearerCredential, requestOnlyLimitHooks, trafficLimitHooks } from '../limits/limit-hooks';
import { inputItemsFields, readResponsesRequest, responsesBlockedTail, responsesOutputFields, responsesStreamTexts, type ResponsesStreamState } from '../proxy/openai-responses.schema';
import { scansOutput } from '../proxy/output-scan';
import type { ResponseOwnership } from '../proxy/response-ownership';
import { callUpstream, plainUpstreamError, proxyScanned, relayJson, relayUnscanned, securityBlock, upstreamError, type AnswerIdRecord, type ChatRouteDeps, type RelayArgs, type StreamWire } from './chat-completions.routes';

/**
 * The OpenAI Responses API on the gateway (the openai SDK's responses.create / .stream / .retrieve /
 * .delete / .inputItems.list), with the policy enforcement of chat completions: the request's texts
 * scanned with the input policy before anything goes upstream (openai-responses.schema.ts says which
 * fields), the answer scanned with the output policy before any of it is returned (whole for JSON,
 * event by event for `response.*` streams: a blocked stream ends with `response.failed`, error code
 * security_block). Stored responses read back (GET) are scanned like a non-stream answer.
 *
 * Tenants share the gateway's provider account: the organization that created each stored response is
 * recorded (response-ownership.ts) and only that organization may read, delete or continue it
 * (`previous_response_id`); for any other caller it does not exist (404, the provider never asked).
 */

export interface ResponsesRouteDeps extends ChatRouteDeps {
  ownership: ResponseOwnership;
}

/** The request as the OpenAPI document shows it (documentation only: readResponsesRequest validates). */
export const responsesRequestDocSchema = z.looseObject({
  model: z.string().min(1).optional(),
  input: z.union([z.string(), z.array(z.union([z.string(), z.looseObject({})]))]).optional(),
  instructions: z.union([z.string(), z.array(z.unknown())]).nullable().optional(),
  previous_response_id: z.string().optional().meta({
    description: 'Forwarded as is: the history it names is stored at the provider and not scanned again (it was scanned when it passed through). Must name a response created through the gateway by the caller\'s organization, else 404 not_found',
  }),
  conversation: z.unknown().optional().meta({ description: 'Refused (400 conversation_not_supported): conversations are not created through the gateway, so none belongs to a tenant' }),
  background: z.literal(false).optional().meta({ description: 'true is refused (400 background_not_supported): a background response could not be scanned before it reaches the client' }),
  stream: streamFlag,
});

const createDoc = documented({
  tags: ['proxy'],
  summary: 'OpenAI-compatible Responses API, scanned',
  description:
    'The request (input items, instructions, tool definitions, prompt variables, the output schema) is scanned with the project policy, then forwarded byte for byte to the upstream provider; ' +
    'its answer (a response object, or with stream: true the response.* SSE events) is scanned before it is returned. A blocked request or answer is a 403 security_block ' +
    '(code input_blocked / output_blocked); a blocked stream ends with a response.failed event (response.error.code security_block). background: true is refused with 400. X-Risk-* headers carry the verdict. ' +
    'The created response is recorded as the caller\'s organization\'s (unless store: false): only that organization can read, delete or continue it.',
  security: ['bearer'],
  body: responsesRequestDocSchema,
  responses: relayedAnswer('a response object'),
  errors: PROXY_ERRORS,
});

const idParams = z.strictObject({ id: z.string().meta({ description: 'The response id (resp_...)' }) });
const STORED =
  'Only a response created through the gateway by the caller\'s organization (any of its projects): any other id is 404 not_found, the provider not asked. ' +
  'Relayed from the upstream provider with the gateway\'s own credential. Stored content is scanned with the output policy before it is returned, as a non-stream answer: ' +
  'a flagged one is a 403 security_block (output_blocked). Counted as one request for rate limits (no tokens) and audited.';

const retrieveDoc = documented({
  tags: ['proxy'],
  summary: 'A stored response (Responses API), its output scanned',
  description: `${STORED} stream=true (resuming a background stream) is refused with 400 stream_not_supported: background responses are not created through the gateway.`,
  security: ['bearer'],
  params: idParams,
  query: z.looseObject({ stream: z.string().optional(), include: z.unknown().optional() }),
  responses: { 200: { description: 'The stored response object, unchanged once scanned', schema: z.looseObject({ id: z.string(), object: z.literal('response') }) } },
  errors: PROXY_ERRORS,
});

const inputItemsDoc = documented({
  tags: ['proxy'],
  summary: 'The input items of a stored response, scanned',
  description: `${STORED} The query (limit, after, order, include) is forwarded as sent.`,
  security: ['bearer'],
  params: idParams,
  responses: { 200: { description: 'The upstream\'s list, unchanged once scanned: {object:"list", data:[items], first_id, last_id, has_more}', schema: z.looseObject({ object: z.literal('list'), data: z.array(z.unknown()) }) } },
  errors: PROXY_ERRORS,
});

const deleteDoc = documented({
  tags: ['proxy'],
  summary: 'Delete a stored response',
  description:
    'Only a response created through the gateway by the caller\'s organization (else 404 not_found, the provider not asked). Passed through to the upstream provider; the answer ({id, object, deleted}) carries no content; ' +
    'once the provider confirmed, the gateway forgets the response. Counted as one request for rate limits and audited.',
  security: ['bearer'],
  params: idParams,
  responses: { 200: { description: 'The upstream\'s answer, unchanged', schema: z.looseObject({ id: z.string(), deleted: z.boolean() }) } },
  errors: [400, 401, 403, 404, 429, 500, 502, 503, 504],
});

/** The input verdict of a request that sends no content (the GET routes): nothing found. */
const NOTHING_SENT: DetectResult = { blocked: false, scanned: false, allowListed: false, categories: [], findings: [], outcomes: [], blockReason: '', elapsedMs: 0 };

const queryOf = (request: FastifyRequest) => (request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '');

export function registerResponsesRoutes(app: FastifyInstance, deps: ResponsesRouteDeps): void {
  const authenticate = requireBearerKey(deps.auth);
  const hooks = { ...trafficLimitHooks(deps.limits, { wire: 'openai-responses', authenticate, credential: bearerCredential }), ...auditHooks(deps.audit) };
  const counted = { ...requestOnlyLimitHooks(deps.limits, { authenticate, credential: bearerCredential }), ...auditHooks(deps.audit) };

  app.post('/v1/responses', { ...createDoc, ...hooks }, async (request, reply) => {
    const summary = readResponsesRequest(request.body);
    const ctx = authOf(request);
    const body = request.body as { previous_response_id?: unknown; conversation?: unknown; store?: unknown };
    if (body.conversation !== undefined && body.conversation !== null) {
      throw invalidRequest(
        'conversation: conversations are not supported through the gateway (they are not created through it, so none belongs to your organization); chain responses with previous_response_id instead',
        'conversation_not_supported',
      );
    }
    if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
      const previous = body.previous_response_id;
      if (typeof previous !== 'string' || !(await deps.ownership.ownedBy(previous, ctx.organizationId))) {
        request.audit = { model: summary.model, findings: [], blocked: false };
        throw notFound('previous_response_id: no response with this id was found', 'not_found');
      }
    }
    // store: false: the provider keeps nothing, so there is nothing to read back or continue.
    const recordsId: AnswerIdRecord | undefined =
      body.store === false ? undefined : { ofJson: responseIdOf, ofEvent: (e) => responseIdOf((e as { response?: unknown } | null)?.response), record: (id) => deps.ownership.record(id, ctx, request.log) };
    return proxyScanned(deps, request, reply, { path: '/responses', summary, fieldsOf: responsesOutputFields, streamWire: responsesStreamWire, recordsId });
  });

  app.get('/v1/responses/:id', { ...retrieveDoc, ...counted }, async (request, reply) => {
    const { stream } = request.query as { stream?: unknown };
    if (stream !== undefined && String(stream).toLowerCase() !== 'false') {
      throw invalidRequest(
        'stream: streaming a stored response is not supported through the gateway (it resumes a background response, which could not be scanned in line); retrieve it without stream',
        'stream_not_supported',
      );
    }
    return relayStored(deps, request, reply, '', (parsed) => {
      const model = (parsed as { model?: unknown } | null)?.model;
      if (typeof model === 'string') request.audit!.model = model;
      return responsesOutputFields(parsed);
    });
  });

  app.get('/v1/responses/:id/input_items', { ...inputItemsDoc, ...counted }, async (request, reply) => relayStored(deps, request, reply, '/input_items', inputItemsFields));

  app.delete('/v1/responses/:id', { ...deleteDoc, ...counted }, async (request, reply) => {
    const id = await ownedId(deps, request);
    const abort = abortOnClientClose(request, reply);
    const upstream = await callUpstream(deps, request, abort.signal, { method: 'DELETE', path: `/responses/${encodeURIComponent(id)}` });
    if (upstream.statusCode >= 400) throw await plainUpstreamError(upstream);
    await deps.ownership.forget(id, authOf(request).organizationId, request.log);
    return relayUnscanned(reply, upstream);
  });
}

/**
 * A stored response (or its input items) read back: the upstream's JSON answer scanned with the output
 * policy (`fieldsOf`) before it is returned, as a non-stream answer is; an error body as chat's is.
 * An answer that is not JSON (an SSE stream) is refused (502), never relayed unscanned.
 */
async function relayStored(deps: ResponsesRouteDeps, request: FastifyRequest, reply: FastifyReply, suffix: string, fieldsOf: (parsed: unknown) => TextField[]): Promise<FastifyReply> {
  const ctx = authOf(request);
  const id = await ownedId(deps, request);
  const abort = abortOnClientClose(request, reply);
  const upstream = await callUpstream(deps, request, abort.signal, { method: 'GET', path: `/responses/${encodeURIComponent(id)}${suffix}${queryOf(request)}` });
  const relay: RelayArgs = { deps, ctx, request, reply, upstream, input: NOTHING_SENT };
  if (upstream.statusCode >= 400) throw await upstreamError(relay);
  if (!scansOutput(ctx.policy.detection)) return relayUnscanned(reply, upstream);
  return relayJson(relay, fieldsOf);
}

/** The id of a response object (a JSON answer, the `response` of a stream event), or null. */
function responseIdOf(value: unknown): string | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof value === 'object' && typeof id === 'string' && id.length > 0 ? id : null;
}

/**
 * The `:id` of a stored-response route, once it is known to be the caller's organization's; otherwise the
 * same 404 as an id that exists nowhere (whether another tenant has it is not revealed), the provider not asked.
 */
async function ownedId(deps: ResponsesRouteDeps, request: FastifyRequest): Promise<string> {
  const { id } = request.params as { id: string };
  request.audit = { findings: [], blocked: false };
  if (!(await deps.ownership.ownedBy(id, authOf(request).organizationId))) throw notFound(`No response with id '${id.slice(0, 128)}' was found`, 'not_found');
  return id;
}

/** A Responses stream (openai-responses.schema.ts): a blocked one ends with response.failed (security_block). */
function responsesStreamWire(model: string): StreamWire {
  const state: ResponsesStreamState = { snapshot: null, sequence: 0 };
  return {
    texts: responsesStreamTexts(state),
    blockedTail: (guard) => {
      const verdict = { categories: guard.fired(), blockReason: guard.blockReason };
      return responsesBlockedTail(state, model, securityBlock('output', verdict).message, verdict.categories.filter((c) => c.action === 'block').map((c) => c.type));
    },
  };
}
