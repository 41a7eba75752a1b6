import {
  API_KEY_PREFIX,
  apiKeyDisplayPrefix,
  apiKeyMatches,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  isWellFormedApiKey,
} from '../../../src/shared/api-key';

describe('API keys', () => {
  it('have the svc_sk_ prefix and 40 base62 characters', () => {
    const key = generateApiKey();
    expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(key).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('are unique and use the whole alphabet roughly uniformly', () => {
    const keys = Array.from({ length: 2000 }, generateApiKey);
    expect(new Set(keys).size).toBe(keys.length);
    const counts = new Map<string, number>();
    for (const k of keys) for (const ch of k.slice(API_KEY_PREFIX.length)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (2000 * 40) / 62; // ≈ 1290 per character
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(expected * 0.8);
      expect(n).toBeLessThan(expected * 1.2);
    }
  });

  it('are stored as SHA-256 hex and matched in constant time', () => {
    const key = generateApiKey();
    const hash = hashApiKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 8));
    expect(apiKeyMatches(key, hash)).toBe(true);
    expect(apiKeyMatches(key + 'x', hash)).toBe(false);
    expect(apiKeyMatches(generateApiKey(), hash)).toBe(false);
    expect(hashesEqual(hash, hash)).toBe(true);
    expect(hashesEqual(hash, 'abcd')).toBe(false);
    expect(hashesEqual(hash, '')).toBe(false);
  });

  it('shows only a short display prefix', () => {
    const key = generateApiKey();
    expect(apiKeyDisplayPrefix(key)).toBe(key.slice(0, 13));
  });

  it.each(['', 'svc_sk_', 'svc_sk_abc', 'sk_' + 'a'.repeat(40), 'svc_sk_' + 'a'.repeat(31), 'svc_sk_' + 'a'.repeat(31) + '!', 'svc_sk_' + 'a'.repeat(129)])(
    'rejects malformed key %p',
    (key) => {
      expect(isWellFormedApiKey(key)).toBe(false);
    },
  );
});
