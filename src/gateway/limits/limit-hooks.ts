import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { isWellFormedApiKey } from '../../shared/api-key';
import { isAppError } from '../../shared/errors';
import type { EncodingName } from '../../shared/tokens';
import { checkInput, readWireRequest, type MeasuredInput, type WireApi } from './input-checks';
import { keyIdOf, type LimitsService, type RouteClass } from './limits.service';
import { isMetered, OutputMeter } from './output-meter';
import { limitView, setRequestLimitHeaders, setTokenLimitHeaders, stricter } from './rate-limit-error';

/** What the limit hooks keep on a request between its hooks. */
export interface RequestLimitsState {
  /** Id of the key that authenticated (the platform limit is per key). */
  key?: string;
  /** Counts this answer's output tokens (policy limits on, traffic routes with an upstream). */
  meter?: OutputMeter;
  /** The input tokens the policy limits counted (exact: within max_input_tokens), for the audit event. */
  inputTokens?: { encoding: EncodingName; tokens: number; texts: number; chars: number };
}

declare module 'fastify' {
  interface FastifyRequest {
    limits?: RequestLimitsState;
  }
}

export type AuthHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
/** Reads the presented API key without validating it (undefined when absent or malformed). */
export type CredentialOf = (request: FastifyRequest) => string | undefined;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export const bearerCredential: CredentialOf = (request) => {
  const header = request.headers.authorization;
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
};

export const svcKeyCredential: CredentialOf = (request) => {
  const header = request.headers['x-svc-key'];
  return typeof header === 'string' ? header.trim() : undefined;
};

export interface LimitedAuthOptions {
  routeClass: RouteClass;
  authenticate: AuthHook;
  credential: CredentialOf;
  /** The route has the policyLimits preHandler: with the policy's limits on, the platform limit is checked there (one store call). */
  policyHook?: boolean;
}

/**
 * onRequest: the key check, guarded. 1) An address at its failed-authentication limit gets 429
 * before its key is even looked at (unless the key authenticated in the last minute: it is no guess);
 * 2) the key is checked (`authenticate`), a failure counts against the address; 3) the key's platform
 * limit answers 429 when exceeded, and sets X-RateLimit-* (deferred to policyLimits when the policy's
 * own limits are on, so a request costs one store call).
 */
export function limitedAuth(limits: LimitsService | undefined, o: LimitedAuthOptions): AuthHook {
  if (!limits) return o.authenticate;
  return async (request, reply) => {
    const presented = o.credential(request);
    const key = presented && isWellFormedApiKey(presented) ? keyIdOf(presented) : undefined;
    const blocked = await limits.checkAddress(request.ip, key);
    if (blocked) {
      const retry = Number(blocked.details?.retry_after ?? 60);
      setRequestLimitHeaders(reply, limitView(limits.settings.authFailuresPerMinute, 0, retry * 1000));
      throw blocked;
    }
    try {
      await o.authenticate(request, reply);
    } catch (err) {
      if (isAppError(err) && err.type === 'authentication_error') await limits.recordAuthFailure(request.ip, key);
      throw err;
    }
    if (!key) return;
    limits.recordAuthSuccess(key);
    request.limits = { key };
    if (o.policyHook && request.auth?.policy.rateLimits.rate_limits_enabled) return;
    const platform = await limits.admitPlatform(o.routeClass, key);
    setRequestLimitHeaders(reply, platform.view);
    if (platform.error) throw platform.error;
  };
}

/**
 * preHandler: the policy's `rate_limits`, when switched on. Validates the input (characters, requested
 * output, flooding, tokens), then takes the key's platform request, one request, the input tokens and
 * the input cost in one atomic store call. Every answer from here on carries X-RateLimit-* (the
 * stricter of platform and policy) and X-TokenLimit-*. A request over a rate limit gets 429 even when
 * its input is also invalid; an invalid input still counts as a request.
 */
export function policyLimits(limits: LimitsService, wire: WireApi): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const ctx = request.auth;
    const rl = ctx?.policy.rateLimits;
    const key = request.limits?.key;
    if (!ctx || !rl?.rate_limits_enabled || !key) return;
    let measured: MeasuredInput | undefined;
    let invalid: unknown;
    try {
      measured = checkInput(readWireRequest(wire, request.body), rl);
    } catch (err) {
      invalid = err;
    }
    const model = wire === 'detect' ? null : (measured?.model ?? null);
    const admission = await limits.admitRequest({ projectId: ctx.projectId, key, limits: rl, model, inputTokens: measured?.inputTokens ?? null });
    setRequestLimitHeaders(reply, stricter(admission.platform.view, admission.requests)!);
    setTokenLimitHeaders(reply, admission.tokens);
    if (admission.error) throw admission.error;
    if (invalid !== undefined) throw invalid;
    if (!measured) return;
    request.limits!.inputTokens = {
      encoding: measured.encoding,
      tokens: measured.inputTokens,
      texts: measured.texts.length,
      chars: measured.texts.reduce((n, t) => n + t.length, 0),
    };
    // No output tokens: /v1/detect has no answer to meter, an embeddings answer is vectors (its input was charged above).
    if (wire === 'detect' || wire === 'openai-embeddings') return;
    const usage = { projectId: ctx.projectId, limits: rl, model };
    request.limits!.meter = new OutputMeter({
      wire,
      encoding: measured.encoding,
      maxOutputTokens: rl.max_output_tokens,
      // Charged once the answer is on its way: never in the way of the bytes to the client.
      onDone: (outputTokens) =>
        setImmediate(() => {
          limits.settle({ ...usage, outputTokens }).catch((err: unknown) => {
            request.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'output tokens could not be counted');
          });
        }),
    });
  };
}

const header = (reply: FastifyReply, name: string) => String(reply.getHeader(name) ?? '');

/** onSend: meters the answer (JSON counted at once; streams wrapped and counted, SSE cut at max_output_tokens). */
export const meterOutput: onSendHookHandler = (request, reply, payload, done) => {
  const meter = request.limits?.meter;
  if (!meter || isMetered(payload)) return done(null, payload);
  if (reply.statusCode >= 300 || payload === null || payload === undefined) {
    meter.finish(0);
    return done(null, payload);
  }
  if (typeof (payload as Readable).pipe === 'function') {
    return done(null, meter.wrap(payload as Readable, header(reply, 'content-type'), header(reply, 'content-encoding')));
  }
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) meter.countJson(payload, header(reply, 'content-encoding'));
  else meter.finish(0);
  return done(null, payload);
};

/**
 * For a route that relays an upstream stream itself (a hijacked reply skips onSend): the same
 * metering on the upstream body. The result supports the stream interface only (pipe, async
 * iteration, setEncoding, destroy), not undici's body mixins (text(), json(), arrayBuffer()).
 */
export function meterStream<T extends Readable>(request: FastifyRequest, body: T, headers: Record<string, string | string[] | undefined>): T {
  const meter = request.limits?.meter;
  if (!meter) return body;
  return meter.wrap(body, String(headers['content-type'] ?? ''), String(headers['content-encoding'] ?? '')) as unknown as T;
}

export interface TrafficLimitHooks {
  onRequest: AuthHook;
  preHandler?: preHandlerAsyncHookHandler;
  onSend?: onSendHookHandler;
}

/** Every limit hook of a traffic route (chat completions, embeddings, detect, sensor messages); just `authenticate` without limits. */
export function trafficLimitHooks(limits: LimitsService | undefined, o: { wire: WireApi; authenticate: AuthHook; credential: CredentialOf }): TrafficLimitHooks {
  if (!limits) return { onRequest: o.authenticate };
  const hooks: TrafficLimitHooks = {
    onRequest: limitedAuth(limits, { routeClass: 'traffic', authenticate: o.authenticate, credential: o.credential, policyHook: true }),
    preHandler: policyLimits(limits, o.wire),
  };
  if (o.wire !== 'detect' && o.wire !== 'openai-embeddings') hooks.onSend = meterOutput;
  return hooks;
}

/**
 * preHandler of a traffic route that sends the model no input to answer (model listings, the sensor's
 * count_tokens): with the policy's `rate_limits` on, one request from the key's platform limit and the
 * project's requests_per_minute (one store call); no tokens, no cost, no input-size checks.
 */
function countRequest(limits: LimitsService): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const ctx = request.auth;
    const rl = ctx?.policy.rateLimits;
    const key = request.limits?.key;
    if (!ctx || !rl?.rate_limits_enabled || !key) return;
    // inputTokens null: the token budget and the spend are only read, never charged.
    const admission = await limits.admitRequest({ projectId: ctx.projectId, key, limits: rl, model: null, inputTokens: null });
    setRequestLimitHeaders(reply, stricter(admission.platform.view, admission.requests)!);
    setTokenLimitHeaders(reply, admission.tokens);
    if (admission.error) throw admission.error;
  };
}

/**
 * The limit hooks of a traffic route that counts as a request but spends no tokens (GET /v1/models,
 * the sensor's /v1/models and /v1/messages/count_tokens): the failed-authentication guard, the key's
 * platform traffic limit and the policy's requests_per_minute; just `authenticate` without limits.
 */
export function requestOnlyLimitHooks(limits: LimitsService | undefined, o: { authenticate: AuthHook; credential: CredentialOf }): TrafficLimitHooks {
  if (!limits) return { onRequest: o.authenticate };
  return {
    onRequest: limitedAuth(limits, { routeClass: 'traffic', authenticate: o.authenticate, credential: o.credential, policyHook: true }),
    preHandler: countRequest(limits),
  };
}
