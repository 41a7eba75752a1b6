import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { Logger } from '../../shared/logger';
import type { AuditEvent } from './audit-writer';

/**
 * The `alert` action: a fired detector with action alert sends a JSON webhook. Queued (never on the
 * request path), signed with HMAC-SHA256, retried with exponential backoff on network errors and 5xx/429.
 * The payload names detector types and confidences only — never the matched text or the request.
 *
 *   POST <ALERT_WEBHOOK_URL>
 *   Content-Type: application/json
 *   X-Alert-Id: <uuid>                  (stable across retries: deduplicate on it)
 *   X-Alert-Timestamp: <unix seconds>
 *   X-Alert-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>
 */
export interface AlertPayload {
  id: string;
  type: 'security.alert';
  created_at: string;
  organization_id: string;
  project_id: string | null;
  path: string;
  session_id: string | null;
  model: string | null;
  blocked: boolean;
  response_status: number;
  /** The detectors whose action is alert (type, confidence, action). */
  alerts: Array<{ type: string; confidence: number; action: string }>;
}

export interface AlertNotifierOptions {
  url: string;
  secret: string;
  logger: Logger;
  maxAttempts?: number;
  baseDelayMs?: number;
  timeoutMs?: number;
  maxQueued?: number;
}

export function signAlert(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export class AlertNotifier {
  private readonly queue: AlertPayload[] = [];
  private running = 0;
  private readonly pending = new Set<Promise<void>>();
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly timeoutMs: number;
  private readonly maxQueued: number;
  readonly stats = { sent: 0, failed: 0, dropped: 0 };

  constructor(private readonly o: AlertNotifierOptions) {
    this.maxAttempts = o.maxAttempts ?? 6;
    this.baseDelayMs = o.baseDelayMs ?? 500;
    this.timeoutMs = o.timeoutMs ?? 5000;
    this.maxQueued = o.maxQueued ?? 10_000;
  }

  /** Queues an alert for an audit event whose findings include action alert; returns at once. */
  notifyFor(event: AuditEvent): void {
    const alerts = event.findings.filter((f) => f.action === 'alert');
    if (alerts.length === 0 || !event.organizationId) return;
    if (this.queue.length >= this.maxQueued) {
      this.stats.dropped += 1;
      this.o.logger.error({ dropped: this.stats.dropped }, 'alert queue full: alert dropped');
      return;
    }
    this.queue.push({
      id: randomUUID(),
      type: 'security.alert',
      created_at: event.createdAt.toISOString(),
      organization_id: event.organizationId,
      project_id: event.projectId,
      path: event.path,
      session_id: event.sessionId,
      model: event.model,
      blocked: event.blocked,
      response_status: event.responseStatus,
      alerts,
    });
    this.pump();
  }

  /** Waits for queued and in-flight deliveries (bounded by the caller's shutdown timeout). */
  async close(): Promise<void> {
    while (this.queue.length > 0 || this.pending.size > 0) await Promise.race([...this.pending, new Promise((r) => setTimeout(r, 50))]);
  }

  private pump(): void {
    while (this.running < 4 && this.queue.length > 0) {
      const payload = this.queue.shift()!;
      this.running += 1;
      const p = this.deliver(payload).finally(() => {
        this.running -= 1;
        this.pending.delete(p);
        this.pump();
      });
      this.pending.add(p);
    }
  }

  private async deliver(payload: AlertPayload): Promise<void> {
    const body = JSON.stringify(payload);
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const res = await request(this.o.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'llm-content-security-gateway-alerts',
            'x-alert-id': payload.id,
            'x-alert-timestamp': String(timestamp),
            'x-alert-signature': signAlert(this.o.secret, timestamp, body),
          },
          body,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        });
        await res.body.dump();
        if (res.statusCode < 300) {
          this.stats.sent += 1;
          return;
        }
        if (res.statusCode < 500 && res.statusCode !== 429 && res.statusCode !== 408) {
          this.o.logger.warn({ status: res.statusCode, alertId: payload.id }, 'alert webhook rejected the alert; not retried');
          this.stats.failed += 1;
          return;
        }
      } catch (err) {
        this.o.logger.warn({ err: err instanceof Error ? err.message : String(err), attempt, alertId: payload.id }, 'alert webhook unreachable');
      }
      if (attempt < this.maxAttempts) await new Promise((r) => setTimeout(r, this.baseDelayMs * 2 ** (attempt - 1)));
    }
    this.stats.failed += 1;
    this.o.logger.error({ alertId: payload.id }, 'alert could not be delivered');
  }
}
