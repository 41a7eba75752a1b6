import { AppError, ERROR_STATUS } from '../../../src/shared/errors';
import { renderError, toAppError } from '../../../src/shared/http/error-handler';

describe('error model', () => {
  it('maps every spec error type to its status', () => {
    expect(ERROR_STATUS).toEqual({
      invalid_request: 400,
      authentication_error: 401,
      permission_denied: 403,
      permission_error: 403,
      security_block: 403,
      not_found: 404,
      rate_limit: 429,
      internal_error: 500,
      service_unavailable: 503,
    });
    for (const [type, status] of Object.entries(ERROR_STATUS)) {
      const err = new AppError(type as keyof typeof ERROR_STATUS, 'm');
      expect(err.status).toBe(status);
      expect(err.toEnvelope()).toEqual({ error: { message: 'm', type, code: type } });
    }
  });

  it('renders the messages-style envelope with the same error fields', () => {
    const err = new AppError('permission_denied', 'nope', { code: 'x' });
    expect(renderError(err, 'messages')).toEqual({ type: 'error', error: { message: 'nope', type: 'permission_denied', code: 'x' } });
    expect(renderError(err, 'standard')).toEqual({ error: { message: 'nope', type: 'permission_denied', code: 'x' } });
  });

  it('maps an unreachable, stalled or overloaded database to 503 storage_unavailable with retry_after', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const cancelled = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    const typeormWrapped = Object.assign(new Error('Query read timeout'), { driverError: new Error('Query read timeout') });
    const causes = [
      refused,
      cancelled,
      typeormWrapped,
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated due to connection timeout'),
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
    ];
    for (const cause of causes) {
      const err = toAppError(cause, 'req-2');
      expect(err.status).toBe(503);
      expect(err.toEnvelope()).toEqual({
        error: { message: 'Storage is temporarily unavailable: retry later', type: 'service_unavailable', code: 'storage_unavailable', details: { retry_after: 5 } },
      });
    }
  });

  it('keeps a rejected row or an unrelated failure a masked 500', () => {
    for (const cause of [
      Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
      new Error('connection to 10.0.0.9 reset by a bug'),
      new Error('Query read timeout while parsing'),
    ]) {
      expect(toAppError(cause, 'req-3')).toMatchObject({ status: 500, type: 'internal_error' });
    }
  });

  it('masks unexpected errors', () => {
    const err = toAppError(new Error('connection to 10.0.0.5 failed: password=hunter2'), 'req-1');
    expect(err.status).toBe(500);
    expect(err.type).toBe('internal_error');
    expect(err.message).toBe('Internal server error (request id req-1)');
  });

  it('maps framework client errors to invalid_request', () => {
    const media = Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 });
    expect(toAppError(media, 'r')).toMatchObject({ status: 400, type: 'invalid_request', code: 'unsupported_media_type' });
    const big = Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 });
    expect(toAppError(big, 'r')).toMatchObject({ status: 413, type: 'invalid_request', code: 'payload_too_large' });
    const json = Object.assign(new SyntaxError('Unexpected token'), { statusCode: 400 });
    expect(toAppError(json, 'r')).toMatchObject({ status: 400, type: 'invalid_request', code: 'invalid_json' });
  });
});
