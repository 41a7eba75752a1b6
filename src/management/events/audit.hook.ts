import * as grpc from '@grpc/grpc-js';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../../shared/errors';
import { inlineTokenCounter, type AuditTokenCounter } from '../../shared/token-counter';
import type { RecordedAttempt, RecordedFinding } from '../../storage/entities/security-event.entity';
import type { AlertNotifier } from './alert-notifier';
import type { AuditEvent, AuditWriter, FailReason } from './audit-writer';

/** What a traffic handler knows about its request, for the audit record (never content). */
export interface AuditDraft {
  model?: string | null;
  /** Texts whose tokens are counted AFTER the response is sent (o200k_base; an approximation for non-OpenAI models). */
  countTexts?: readonly string[];
  /** The input tokens when they are known without counting texts (token-id input of embeddings); wins over countTexts. */
  inputTokens?: number;
  findings?: RecordedFinding[];
  blocked?: boolean;
  /** Set when the request failed closed because detection was unavailable or timed out. */
  failReason?: FailReason;
  /** JSON paths of request content no detector could read (bounded). */
  unscannedContent?: string[];
  /** The upstream provider of the answer (callUpstream notes it). */
  provider?: string;
  /** Every attempt at an upstream provider, in order (callUpstream notes them). */
  upstreamAttempts?: RecordedAttempt[];
}

declare module 'fastify' {
  interface FastifyRequest {
    audit?: AuditDraft;
  }
}

const SESSION_ID = /^[\x21-\x7e]{1,128}$/;

export function sessionIdOf(request: FastifyRequest): string | null {
  const v = request.headers['x-agent-session-id'];
  return typeof v === 'string' && SESSION_ID.test(v) ? v : null;
}

/**
 * The input tokens of the request's texts (o200k_base). When the policy's limits already counted the same
 * texts with o200k_base (an exact count: the request was within max_input_tokens) that count is used;
 * else the sinks' counter counts them (a worker thread for long texts), inline without one. A count that
 * fails (thrown or rejected) is null and logged: the event is recorded without it, never lost.
 */
function tokensOf(request: FastifyRequest, texts: readonly string[] | undefined, sinks: AuditSinks): number | null | Promise<number | null> {
  if (!texts) return null;
  const measured = request.limits?.inputTokens;
  if (measured && measured.encoding === 'o200k_base' && measured.texts === texts.length && measured.chars === texts.reduce((n, t) => n + t.length, 0)) {
    return measured.tokens;
  }
  const failed = (err: unknown): null => {
    request.log?.warn({ err: err instanceof Error ? err.message : 'unknown' }, 'audit input token count failed: recorded without it');
    return null;
  };
  try {
    const counted = (sinks.tokens ?? inlineTokenCounter).count(texts);
    return typeof counted === 'number' ? counted : counted.catch(failed);
  } catch (err) {
    return failed(err);
  }
}

/**
 * onResponse hook of every traffic route: one SecurityEvent per request, written by the batching
 * writer after the response has gone out. Without an authenticated project the event is a failed
 * authentication (401) or an unattributed rejection.
 */
export interface AuditSinks {
  writer: AuditWriter;
  /** Receives every event; sends a webhook when a finding's action is alert. */
  alerts?: AlertNotifier;
  /** Counts the input tokens (the service's counts long texts in a worker); inline when absent. */
  tokens?: Pick<AuditTokenCounter, 'count'>;
}

/** A verdict blocked by no finding but by a detector that failed (fail mode closed): why. */
export function failReasonOfResult(r: {
  blocked: boolean;
  categories: ReadonlyArray<{ action: string }>;
  outcomes: ReadonlyArray<{ status: string; failMode: string }>;
}): FailReason | undefined {
  if (!r.blocked || r.categories.some((c) => c.action === 'block')) return undefined;
  const failed = r.outcomes.filter((o) => (o.status === 'error' || o.status === 'timeout') && o.failMode === 'closed');
  if (failed.length === 0) return undefined;
  return failed.some((o) => o.status === 'timeout') ? 'detection_timeout' : 'detection_unavailable';
}

/** An error that failed the request closed because detection could not answer (503 detection_unavailable). */
export function failReasonOfError(err: unknown): FailReason | undefined {
  if (!isAppError(err) || err.code !== 'detection_unavailable') return undefined;
  const cause = err.cause as { code?: unknown } | undefined;
  return cause?.code === grpc.status.DEADLINE_EXCEEDED ? 'detection_timeout' : 'detection_unavailable';
}

/** Notes a fail-closed reason (from a verdict or an error) in the request's audit draft; the first one wins. */
export function noteFailClosed(request: FastifyRequest, reason: FailReason | undefined): void {
  if (!reason) return;
  request.audit = request.audit ?? {};
  request.audit.failReason ??= reason;
}

/** Route hooks of the audit trail: onError notes fail-closed errors, onResponse records the event. */
export function auditHooks(sinks: AuditSinks) {
  return {
    onError: async (request: FastifyRequest, _reply: FastifyReply, error: FastifyError): Promise<void> => {
      noteFailClosed(request, failReasonOfError(error));
    },
    onResponse: auditResponses(sinks),
  };
}

export function auditResponses(sinks: AuditSinks) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const ctx = request.auth;
    const draft = request.audit ?? {};
    const event: AuditEvent = {
      organizationId: ctx?.organizationId ?? null,
      projectId: ctx?.projectId ?? null,
      kind: ctx ? 'request' : 'auth_failed',
      path: (request.url.split('?')[0] ?? '').slice(0, 512),
      sessionId: sessionIdOf(request),
      model: draft.model ?? null,
      inputTokens: null,
      findings: draft.findings ?? [],
      blocked: draft.blocked ?? false,
      responseStatus: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime * 1000) / 1000,
      clientIp: request.ip ?? null,
      failReason: draft.failReason ?? null,
      unscannedContent: draft.unscannedContent ?? null,
      requestId: String(request.id),
      provider: draft.provider ?? null,
      upstreamAttempts: draft.upstreamAttempts ?? null,
      createdAt: new Date(),
    };
    const tokens = ctx ? (draft.inputTokens ?? tokensOf(request, draft.countTexts, sinks)) : null;
    if (typeof tokens === 'number' || tokens === null) {
      event.inputTokens = tokens;
      sinks.writer.record(event);
      sinks.alerts?.notifyFor(event);
      return;
    }
    // Counted in a worker: the event is recorded when the count is in (the writer's flush and close wait).
    sinks.writer.recordWhenReady(
      tokens.then((n) => {
        event.inputTokens = n;
        sinks.alerts?.notifyFor(event);
        return event;
      }),
      request.log,
    );
  };
}
