import type { FastifyReply, FastifyRequest } from 'fastify';
import { countTextTokens } from '../../shared/tokens';
import type { RecordedFinding } from '../../storage/entities/security-event.entity';
import type { AlertNotifier } from './alert-notifier';
import type { AuditEvent, AuditWriter } from './audit-writer';

/** What a traffic handler knows about its request, for the audit record (never content). */
export interface AuditDraft {
  model?: string | null;
  /** Texts whose tokens are counted AFTER the response is sent (o200k_base; an approximation for non-OpenAI models). */
  countTexts?: readonly string[];
  findings?: RecordedFinding[];
  blocked?: boolean;
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
      createdAt: new Date(),
    };
    sinks.writer.record(event);
    sinks.alerts?.notifyFor(event);
  };
}
