import { QueryFailedError } from 'typeorm';
import { failReasonOfError, failReasonOfResult } from '../../../src/management/events/audit.hook';
import { cleanText, eventFromJson, eventToJson, sanitizeEvent } from '../../../src/management/events/audit-sanitizer';
import { AppError } from '../../../src/shared/errors';
import { classifyStorageError, errorCodeOf } from '../../../src/storage/storage-errors';

const pgError = (code: string) => Object.assign(new Error('x'), { code });

describe('classifyStorageError', () => {
  it.each([
    ['08006', 'transient'], // connection_failure
    ['57P01', 'transient'], // admin_shutdown
    ['53300', 'transient'], // too_many_connections
    ['40001', 'transient'], // serialization_failure
    ['57014', 'transient'], // query_canceled (statement timeout)
    ['23503', 'permanent'], // foreign_key_violation
    ['22021', 'permanent'], // character_not_in_repertoire (NUL)
    ['22001', 'permanent'], // string_data_right_truncation
    ['42P01', 'permanent'], // undefined_table
  ])('SQLSTATE %s is %s, also wrapped by TypeORM', (code, kind) => {
    expect(classifyStorageError(pgError(code))).toBe(kind);
    expect(classifyStorageError(new QueryFailedError('INSERT', [], pgError(code)))).toBe(kind);
  });

  it('socket errors (also inside an AggregateError) are transient; an unexplained error is unknown', () => {
    expect(classifyStorageError(pgError('ECONNREFUSED'))).toBe('transient');
    expect(classifyStorageError(new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')]))).toBe('transient');
    expect(classifyStorageError(new Error('Connection terminated unexpectedly'))).toBe('transient');
    expect(classifyStorageError(new TypeError('x is not a function'))).toBe('unknown');
    expect(errorCodeOf(new QueryFailedError('INSERT', [], pgError('23503')))).toBe('23503');
  });
});

describe('fail reasons', () => {
  const result = (status: string, categories: Array<{ action: string }> = []) => ({
    blocked: true, categories, outcomes: [{ status, failMode: 'closed' }],
  });
  it('a verdict blocked only by a failed detector says why; a finding block is not a failure', () => {
    expect(failReasonOfResult(result('timeout'))).toBe('detection_timeout');
    expect(failReasonOfResult(result('error'))).toBe('detection_unavailable');
    expect(failReasonOfResult(result('timeout', [{ action: 'block' }]))).toBeUndefined();
    expect(failReasonOfResult({ ...result('timeout'), blocked: false })).toBeUndefined();
  });
  it('a 503 detection_unavailable error: timeout when its gRPC cause is DEADLINE_EXCEEDED', () => {
    const err = (code: number) => new AppError('internal_error', 'x', { code: 'detection_unavailable', status: 503, cause: { code } });
    expect(failReasonOfError(err(4))).toBe('detection_timeout');
    expect(failReasonOfError(err(14))).toBe('detection_unavailable');
    expect(failReasonOfError(new AppError('invalid_request', 'x'))).toBeUndefined();
  });
});

describe('sanitizeEvent', () => {
  it('strips NUL everywhere, cuts to column limits without splitting a surrogate pair, fixes numbers and dates', () => {
    const e = sanitizeEvent({
      organizationId: 'not-a-uuid', projectId: null, kind: 'request', path: '/v1/\u0000x', sessionId: null,
      model: 'a'.repeat(199) + '😀', inputTokens: 1e12, findings: [{ type: 't\u0000', confidence: 1, action: 'log' }],
      blocked: true, responseStatus: 200, latencyMs: Number.NaN, clientIp: null, createdAt: new Date(Number.NaN),
    });
    expect(e.path).toBe('/v1/x');
    expect(e.model).toBe('a'.repeat(199));
    expect(e.organizationId).toBeNull();
    expect(e.inputTokens).toBe(2_147_483_647);
    expect(e.findings[0]!.type).toBe('t');
    expect(e.latencyMs).toBe(0);
    expect(Number.isNaN(e.createdAt.getTime())).toBe(false);
    expect(cleanText('ab\u0000c', 2)).toBe('ab');
  });

  it('unscanned_content: NUL stripped, at most 200 paths of 512 characters, empty → null; kept through the spool', () => {
    const base = {
      organizationId: null, projectId: null, kind: 'request' as const, path: '/v1/messages', sessionId: null, model: null, inputTokens: null,
      findings: [], blocked: false, responseStatus: 200, latencyMs: 1, clientIp: null, createdAt: new Date(),
    };
    const e = sanitizeEvent({ ...base, unscannedContent: ['messages[0].content[0].source\u0000', 'x'.repeat(600), ...Array.from({ length: 300 }, () => 'p')] });
    expect(e.unscannedContent).toHaveLength(200);
    expect(e.unscannedContent!.slice(0, 2)).toEqual(['messages[0].content[0].source', 'x'.repeat(512)]);
    expect(sanitizeEvent({ ...base, unscannedContent: [] }).unscannedContent).toBeNull();
    expect(sanitizeEvent(base).unscannedContent).toBeNull();
    expect(eventFromJson(JSON.stringify(eventToJson(e)))?.unscannedContent).toEqual(e.unscannedContent);
  });
});
