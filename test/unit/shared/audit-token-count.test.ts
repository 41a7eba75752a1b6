import type { FastifyReply, FastifyRequest } from 'fastify';
import { auditResponses, type AuditSinks } from '../../../src/management/events/audit.hook';
import type { AuditEvent } from '../../../src/management/events/audit-sanitizer';
import { AuditTokenCounter } from '../../../src/shared/token-counter';
import { countTextTokens } from '../../../src/shared/tokens';
import { generateProse } from '../../../tools/text-corpus';

/**
 * The audit event's input tokens (o200k_base): reused from the policy limits' exact count of the same texts,
 * else counted (by the token worker for long texts, the event then recorded when the count is in).
 */
function sinksCapturing(tokens?: AuditSinks['tokens']) {
  const recorded: AuditEvent[] = [];
  const later: Array<Promise<AuditEvent>> = [];
  const writer = {
    record: (e: AuditEvent) => void recorded.push(e),
    recordWhenReady: (e: Promise<AuditEvent>) => void later.push(e),
  };
  return { recorded, later, sinks: { writer, tokens } as unknown as AuditSinks };
}

function request(texts: string[], limits?: FastifyRequest['limits']): FastifyRequest {
  return {
    auth: { organizationId: 'o', projectId: 'p' },
    audit: { countTexts: texts },
    limits,
    url: '/v1/detect',
    headers: {},
    ip: '127.0.0.1',
  } as unknown as FastifyRequest;
}
const reply = { statusCode: 200, elapsedTime: 1.5 } as unknown as FastifyReply;
const exact = (texts: string[]) => texts.reduce((n, t) => n + countTextTokens(t), 0);

describe('audit input tokens', () => {
  it('reuses the policy limits’ o200k_base count of the same texts instead of counting again', async () => {
    const texts = ['hello there', 'general kenobi'];
    const { recorded, sinks } = sinksCapturing();
    const measured = { encoding: 'o200k_base' as const, tokens: 4242, texts: 2, chars: texts[0]!.length + texts[1]!.length };
    await auditResponses(sinks)(request(texts, { inputTokens: measured }), reply);
    expect(recorded[0]?.inputTokens).toBe(4242);
  });

  it('counts again when the limits used another encoding or other texts', async () => {
    const texts = ['hello there', 'general kenobi'];
    const { recorded, sinks } = sinksCapturing();
    await auditResponses(sinks)(request(texts, { inputTokens: { encoding: 'cl100k_base', tokens: 1, texts: 2, chars: 25 } }), reply);
    await auditResponses(sinks)(request(texts, { inputTokens: { encoding: 'o200k_base', tokens: 1, texts: 1, chars: 11 } }), reply);
    expect(recorded.map((e) => e.inputTokens)).toEqual([exact(texts), exact(texts)]);
  });

  it('a count that throws or rejects leaves the event without input tokens, recorded all the same', async () => {
    const throwing = { count: () => { throw new RangeError('Maximum call stack size exceeded'); } };
    const rejecting = { count: () => Promise.reject(new RangeError('Maximum call stack size exceeded')) };
    const warnings: string[] = [];
    const req = (texts: string[]) => Object.assign(request(texts), { log: { warn: (_o: unknown, msg: string) => void warnings.push(msg) } }) as FastifyRequest;
    const a = sinksCapturing(throwing as unknown as AuditSinks['tokens']);
    await auditResponses(a.sinks)(req(['some text']), reply);
    expect(a.recorded).toHaveLength(1);
    expect(a.recorded[0]).toMatchObject({ inputTokens: null, path: '/v1/detect', responseStatus: 200 });
    const b = sinksCapturing(rejecting as unknown as AuditSinks['tokens']);
    await auditResponses(b.sinks)(req(['some text']), reply);
    expect(b.later).toHaveLength(1);
    await expect(b.later[0]).resolves.toMatchObject({ inputTokens: null, path: '/v1/detect' });
    expect(warnings).toEqual(['audit input token count failed: recorded without it', 'audit input token count failed: recorded without it']);
  });

  it('a long text is counted by the worker: the event is handed over pending and completed with the exact count', async () => {
    const counter = new AuditTokenCounter({ workers: 1, minChars: 1024 });
    try {
      const texts = [generateProse({ seed: 8, length: 40_000 })];
      const { recorded, later, sinks } = sinksCapturing(counter);
      await auditResponses(sinks)(request(texts), reply);
      expect(recorded).toHaveLength(0);
      expect(later).toHaveLength(1);
      const event = await later[0]!;
      expect(event.inputTokens).toBe(exact(texts));
      expect(event).toMatchObject({ path: '/v1/detect', responseStatus: 200, projectId: 'p' });
      expect(counter.pool?.dispatched).toBe(1);
    } finally {
      await counter.close();
    }
  });
});
