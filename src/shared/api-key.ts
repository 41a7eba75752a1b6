import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_PATTERN } from './config';

export const API_KEY_PREFIX = 'svc_sk_';
/** Random part: 40 base62 characters ≈ 238 bits from the CSPRNG. */
const RANDOM_LENGTH = 40;
/** Characters of the key kept for display (`svc_sk_` + 6). */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new raw key: `svc_sk_` + 40 base62 characters, uniformly drawn (rejection sampling, no modulo bias). */
export function generateApiKey(): string {
  let out = API_KEY_PREFIX;
  while (out.length < API_KEY_PREFIX.length + RANDOM_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248) out += BASE62[byte % 62]; // 248 = 4 × 62: keep only bytes that map uniformly
      if (out.length === API_KEY_PREFIX.length + RANDOM_LENGTH) break;
    }
  }
  return out;
}

export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/** SHA-256 (hex) of the key: the only form in which a key is stored. Keys are high-entropy, so no salt/KDF is needed. */
export function hashApiKey(rawKey: string): string {
  return createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

/** The leading characters kept for display, e.g. `svc_sk_Ab12Cd`. */
export function apiKeyDisplayPrefix(rawKey: string): string {
  return rawKey.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** Constant-time comparison of two key hashes (hex). */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && x.length === y.length && timingSafeEqual(x, y);
}

/** Constant-time comparison of a presented key against a stored hash. */
export function apiKeyMatches(rawKey: string, storedHash: string): boolean {
  return hashesEqual(hashApiKey(rawKey), storedHash);
}
