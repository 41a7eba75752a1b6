import { changedFields } from '../../../src/management/audit-trail/management-trail';
import { redactSecrets } from '../../../src/management/audit-trail/redact';
import { generateApiKey, hashApiKey } from '../../../src/shared/api-key';

describe('management trail snapshots', () => {
  it('redacts secret fields at any depth, whatever their spelling, and full keys inside strings', () => {
    const key = generateApiKey();
    const snapshot = {
      name: `leaked ${key} here`,
      key_prefix: key.slice(0, 13),
      raw_key: key,
      keyHash: hashApiKey(key),
      nested: [{ 'Api-Key': 'sk-provider', client_secret: 's', credentials: { user: 'u' }, password: 'p', kept: 1 }],
      rate_limits: { tokens_per_minute: 100, max_input_tokens: 5 },
      missing: undefined,
    };
    const out = redactSecrets(snapshot);
    expect(out).toEqual({
      name: 'leaked [REDACTED] here',
      key_prefix: key.slice(0, 13),
      raw_key: '[REDACTED]',
      keyHash: '[REDACTED]',
      nested: [{ 'Api-Key': '[REDACTED]', client_secret: '[REDACTED]', credentials: '[REDACTED]', password: '[REDACTED]', kept: 1 }],
      rate_limits: { tokens_per_minute: 100, max_input_tokens: 5 },
    });
    const text = JSON.stringify(out);
    expect(text).not.toContain(key);
    expect(text).not.toContain(hashApiKey(key));
    // A deep copy: the input is untouched.
    expect(snapshot.raw_key).toBe(key);
  });

  it('lists the top-level fields that differ', () => {
    expect(changedFields({ a: 1, b: [1], c: { x: 1 } }, { a: 1, b: [2], c: { x: 1 }, d: null })).toEqual(['b', 'd']);
    expect(changedFields(null, { b: 1, a: 2 })).toEqual(['a', 'b']);
    expect(changedFields({ a: 1 }, null)).toEqual(['a']);
  });
});
