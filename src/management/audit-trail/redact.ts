import { API_KEY_PREFIX } from '../../shared/api-key';
import { REDACTED } from '../../shared/logger';

/**
 * Field names whose value is a secret wherever they appear: raw and hashed keys, provider credentials.
 * Compared case-insensitively with `_` and `-` removed, so `raw_key`, `rawKey` and `Raw-Key` all match.
 * `key_prefix` is not a secret (it is shown in every project read) and stays.
 */
const SECRET_FIELDS = new Set(
  ['raw_key', 'key_hash', 'api_key', 'apikey', 'secret', 'client_secret', 'password', 'authorization', 'credentials', 'private_key', 'access_token', 'refresh_token', 'bearer_token']
    .map(normalizeName),
);

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '');
}

/** A full API key anywhere inside a string (a name or a list entry someone pasted a key into). */
const API_KEY_IN_TEXT = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9]{32,128}`, 'g');

/**
 * A deep copy of a snapshot fit for the audit trail: secret fields (by name, at any depth) become
 * "[REDACTED]", full API keys inside strings too. Plain JSON in, plain JSON out.
 */
export function redactSecrets(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(API_KEY_IN_TEXT, REDACTED);
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      out[k] = SECRET_FIELDS.has(normalizeName(k)) ? REDACTED : redactSecrets(v);
    }
    return out;
  }
  return value;
}
