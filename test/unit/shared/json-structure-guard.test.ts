import { findJsonStructureProblem } from '../../../src/shared/http/json-structure-guard';
import { clientErrorOf, jsonStructureError, toAppError } from '../../../src/shared/http/error-handler';
import { hasLoneSurrogate } from '../../../src/shared/storable-text';

const check = (text: string, depth = 64) => {
  JSON.parse(text); // the guard runs on text JSON.parse accepted
  return findJsonStructureProblem(text, depth);
};

describe('findJsonStructureProblem: duplicate keys', () => {
  it('finds a repeated key at the top level and names it', () => {
    expect(check('{"content":"attack","content":"hi"}')).toEqual({ kind: 'duplicate_key', key: 'content', path: 'content' });
  });

  it('finds it at any depth, with the path of the repeat', () => {
    const body = '{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"x","content":"y"}]}';
    expect(check(body)).toEqual({ kind: 'duplicate_key', key: 'content', path: 'messages[1].content' });
    expect(check('[[1,2],{"a":{"b":1,"c":{"d":1,"d":2}}}]')).toEqual({ kind: 'duplicate_key', key: 'd', path: '[1].a.c.d' });
  });

  it('compares keys decoded: an escaped spelling of the same key is a repeat', () => {
    expect(check('{"content":"x","\\u0063ontent":"y"}')).toMatchObject({ kind: 'duplicate_key', key: 'content' });
    expect(check('{"a\\"b":1,"a\\u0022b":2}')).toMatchObject({ kind: 'duplicate_key', key: 'a"b' });
  });

  it('accepts the same key in different objects, and string values that look like keys', () => {
    expect(check('{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]}')).toBeNull();
    expect(check('{"a":"\\"a\\":1,","b":"{\\"b\\":2,\\"b\\":3}","c":["a","a"]}')).toBeNull();
    expect(check('{"x":"ends with a backslash \\\\","x2":"\\\\\\""}')).toBeNull();
    expect(check('{"":1,"\\u0000":2}')).toBeNull();
  });

  it('accepts scalars, empty containers and whitespace anywhere', () => {
    for (const t of ['1', '"s"', 'null', '{}', '[]', ' { "a" : [ 1 , { } ] , "b" : 2 } ']) expect(check(t)).toBeNull();
    expect(check(' { "a" : 1 , "a" : 2 } ')).toMatchObject({ kind: 'duplicate_key', key: 'a' });
  });
});

describe('findJsonStructureProblem: depth', () => {
  const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('accepts exactly the limit and refuses one level more', () => {
    expect(check(nested(64))).toBeNull();
    expect(check(nested(65))).toEqual({ kind: 'too_deep', depth: 64, path: `[0]`.repeat(64) });
    expect(check('{"a":{"b":[1]}}', 3)).toBeNull();
    expect(check('{"a":{"b":[{}]}}', 3)).toEqual({ kind: 'too_deep', depth: 3, path: 'a.b[0]' });
  });

  it('refuses a 100,000-deep document without a stack overflow', () => {
    expect(check(nested(100_000))).toMatchObject({ kind: 'too_deep', depth: 64 });
  });
});

describe('errors of the JSON and HTTP layers', () => {
  it('renders structure problems as 400 invalid_request with their own codes', () => {
    const dup = jsonStructureError({ kind: 'duplicate_key', key: 'content', path: 'messages[0].content' });
    expect(dup.toEnvelope()).toEqual({
      error: {
        message: 'Request body repeats the JSON key "content" (at messages[0].content); each key may appear once per object',
        type: 'invalid_request',
        code: 'duplicate_json_key',
      },
    });
    expect(dup.status).toBe(400);
    const deep = jsonStructureError({ kind: 'too_deep', depth: 64, path: 'a' });
    expect(deep).toMatchObject({ status: 400, type: 'invalid_request', code: 'json_too_deep' });
  });

  it('maps Node HTTP parser errors onto statuses and codes', () => {
    const e = (code: string) => clientErrorOf(Object.assign(new Error('x'), { code }));
    expect(e('HPE_HEADER_OVERFLOW')).toMatchObject({ status: 431, type: 'invalid_request', code: 'headers_too_large' });
    expect(e('HPE_INVALID_METHOD')).toMatchObject({ status: 400, type: 'invalid_request', code: 'malformed_request' });
    expect(e('ERR_HTTP_REQUEST_TIMEOUT')).toMatchObject({ status: 408, code: 'request_timeout' });
    const badUrl = Object.assign(new URIError("'%zz' is not a valid url component"), { code: 'FST_ERR_BAD_URL', statusCode: 400 });
    expect(toAppError(badUrl, 'r')).toMatchObject({ status: 400, type: 'invalid_request', code: 'invalid_url' });
  });

  it('finds lone surrogates, not pairs', () => {
    expect(hasLoneSurrogate('a\ud800')).toBe(true);
    expect(hasLoneSurrogate('\udc00b')).toBe(true);
    expect(hasLoneSurrogate('\udc00\ud800')).toBe(true);
    expect(hasLoneSurrogate('emoji 😀 ok')).toBe(false);
  });
});
