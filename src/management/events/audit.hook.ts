import * as grpc from '@grpc/grpc-js';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../../shared/errors';
import { countTextTokens } from '../../shared/tokens';
import type { RecordedFinding } from '../../storage/entities/security-event.entity';
import type { AlertNotifier } from './alert-notifier';
import type { AuditEvent, AuditWriter, FailReason } from './audit-writer';

/** What a traffic handler knows about its request, for the audit record (never content). */
export interface AuditDraft {
  model?: string | null;
  /** Texts whose tokens are counted AFTER the response is sent (o200k_base; an approximation for non-OpenAI models). */
  countTexts?: readonly string[];
  findings?: RecordedFinding[];
  blocked?: boolean;
  /** Set when the request failed closed because detection was unavailable or timed out. */
  failReason?: FailReason;
  /** JSON paths of request content no detector could read (bounded). */
  unscannedContent?: string[];
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

function tokensOf(texts: readonly string[] | undefined): number | null {
  if (!texts) return null;
  let n = 0;
  // countTextTokens is linear on long unbroken runs and treats special-token text as plain text.
  for (const t of texts) n += t.length === 0 ? 0 : countTextTokens(t);
  return n;
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
      inputTokens: ctx ? tokensOf(draft.countTexts) : null,
      findings: draft.findings ?? [],
      blocked: draft.blocked ?? false,
      responseStatus: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime * 1000) / 1000,
      clientIp: request.ip ?? null,
      failReason: draft.failReason ?? null,
      unscannedContent: draft.unscannedContent ?? null,
      createdAt: new Date(),
    };
    sinks.writer.record(event);
    sinks.alerts?.notifyFor(event);
  };
}
