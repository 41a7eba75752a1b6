/**
 * Value analysis shared by the credential rules: Shannon entropy, placeholder recognition, and the
 * scoring of generic `key = "value"` assignments (the part of secret detection that has no provider
 * prefix to lean on). Pure functions, no regex backtracking: the few JS regexes here run on one bounded
 * value (<= 512 characters) and have no nested quantifiers.
 */

/** Shannon entropy in bits per character. */
export function shannonEntropy(value: string): number {
  if (value.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  const n = value.length;
  for (const c of counts.values()) {
    const p = c / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Number of character classes present: lowercase, uppercase, digits, other. */
export function charClasses(value: string): number {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

/** Share of adjacent pairs that step by +1 ("abcdef", "123456"): typical of made-up sample keys. */
function sequentialShare(value: string): number {
  if (value.length < 2) return 0;
  let steps = 0;
  for (let i = 1; i < value.length; i++) {
    if (value.charCodeAt(i) === value.charCodeAt(i - 1) + 1) steps++;
  }
  return steps / (value.length - 1);
}

const PLACEHOLDER_WORDS =
  /your|example|sample|dummy|placeholder|redacted|changeme|change_me|change-me|changeit|insert|replace|fake|xxxx|\*\*\*|\.\.\.|todo|fixme|secret|password|passwd|_here\b/i;
const TEMPLATE_REF = /^(?:\$\{|\$\(|\{\{|\{%|%\(|%[A-Z_]+%|\$[A-Za-z_]|<[^>]*>$|\[[^\]]*\]$|@[A-Za-z_]+$)/;
const CODE_REF = /^(?:process\.env|os\.environ|os\.getenv|env\(|ENV\[|System\.getenv|getenv|config\.|settings\.|secrets\.|vault:|ssm:|arn:aws)/i;
const WEAK_DEFAULTS = new Set([
  'password', 'passwd', 'pass', 'secret', 'admin', 'root', 'test', 'testing', 'guest', 'user', 'default',
  'changeme', 'letmein', 'qwerty', '123456', '12345678', '123456789', 'abc123', 'password1', 'password123',
  'token', 'apikey', 'api_key', 'none', 'null', 'nil', 'undefined', 'true', 'false', 'empty', 'required',
  'optional', 'string', 'str', 'value', 'foo', 'bar', 'baz', 'foobar', 'hunter2', 'mysecret', 'supersecret',
  'mypassword', 'secretpassword', 'postgres', 'mysql', 'redis', 'rabbitmq', 'example', 'sample', 'demo',
]);

/**
 * True for values that stand for a secret rather than being one: "YOUR_API_KEY", "<token>", "${DB_PASS}",
 * "xxxx", "sk-...", "changeme", "my-top-secret", "fallback-password", env lookups, all-one-character runs
 * and sequential "1234567890abcdef".
 */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (v.length === 0) return true;
  if (WEAK_DEFAULTS.has(v.toLowerCase())) return true;
  if (PLACEHOLDER_WORDS.test(v) || TEMPLATE_REF.test(v) || CODE_REF.test(v)) return true;
  if (new Set(v).size <= 2) return true;
  if (v.length >= 8 && sequentialShare(v) > 0.4) return true;
  return false;
}

/** A body of a provider-prefixed token that is obviously made up (low entropy, sequential, "EXAMPLE"). */
export function isPlaceholderBody(body: string): boolean {
  if (/example|sample|dummy|your|xxxx|XXXX|0000000|\.\.\./i.test(body)) return true;
  if (body.length >= 8 && shannonEntropy(body) < 2.5) return true;
  return body.length >= 8 && sequentialShare(body) > 0.4;
}

/** Kinds of secret a key name announces. */
export type KeyKind = 'password' | 'token' | null;

const PASSWORD_PARTS = new Set(['password', 'passwd', 'pass', 'passphrase', 'pwd', 'passwort', 'pw']);
const TOKEN_PARTS = new Set(['secret', 'secrets', 'token', 'apikey', 'credential', 'credentials', 'auth', 'bearer']);
const KEY_QUALIFIERS = new Set([
  'api', 'access', 'private', 'secret', 'signing', 'encryption', 'master', 'session', 'client', 'app',
  'auth', 'service', 'account', 'license', 'webhook', 'hmac', 'jwt', 'consumer', 'subscription',
]);
/** Components that, anywhere in the key, turn it into metadata about a secret rather than a secret. */
const BENIGN_PARTS = new Set([
  'hash', 'hashed', 'hint', 'length', 'len', 'min', 'max', 'minlength', 'maxlength', 'policy', 'field',
  'label', 'placeholder', 'type', 'name', 'id', 'url', 'uri', 'endpoint', 'file', 'path', 'dir', 'prompt',
  'reset', 'expiry', 'expires', 'expiration', 'expired', 'ttl', 'count', 'header', 'regex', 'pattern',
  'rule', 'rules', 'strength', 'required', 'enabled', 'validator', 'validation', 'input', 'button',
  'form', 'mode', 'format', 'limit', 'limits', 'usage', 'budget', 'size', 'encoding', 'method',
  'location', 'var', 'variable', 'ref', 'provider', 'store', 'manager', 'helper', 'class',
  'schema', 'error', 'errors', 'message', 'text', 'visible', 'visibility', 'icon', 'output', 'total',
  'num', 'completion', 'cached', 'remaining', 'used', 'prefix', 'suffix', 'index', 'version', 'scope',
  'scopes', 'kind', 'source', 'changed', 'updated', 'created', 'at', 'timeout', 'retries',
  'authority', 'author', 'authors', 'flow', 'strategy', 'handler', 'middleware',
]);

/** Splits `DB_PASSWORD`, `clientSecret`, `x-api-key`, `aws.secretAccessKey` into lowercase parts. */
export function keyParts(key: string): string[] {
  const spaced = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_.\-\s"'[\]]+/g, ' ');
  return spaced.toLowerCase().split(' ').filter((p) => p.length > 0);
}

/** What a key name says about its value, or null when it is not a secret's name. */
export function classifyKey(key: string): KeyKind {
  const parts = keyParts(key);
  if (parts.length === 0) return null;
  if (parts.some((p) => BENIGN_PARTS.has(p))) return null;
  let kind: KeyKind = null;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as string;
    if (PASSWORD_PARTS.has(p) || p.endsWith('password') || p.endsWith('passwd')) return 'password';
    if (TOKEN_PARTS.has(p) || p.endsWith('secret') || p.endsWith('token') || p.endsWith('apikey')) kind = 'token';
    if (p.endsWith('secretkey') || p.endsWith('accesskey') || p.endsWith('privatekey')) kind = 'token';
    if (p === 'key' && i > 0 && KEY_QUALIFIERS.has(parts[i - 1] as string)) kind = 'token';
  }
  return kind;
}

const IDENTIFIER_PATH = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;
const FILE_LIKE = /^(?:\/|\.\.?\/|~\/|[A-Za-z]:\\)|\.(?:pem|key|json|ya?ml|txt|env|crt|p12|pfx|der|cfg|ini|conf)$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^[0-9a-f]+$/i;

export interface AssignmentValue {
  value: string;
  quoted: boolean;
}

/**
 * Confidence for the value of an assignment whose key classified as `kind`; 0 = not a secret.
 *   password keys: >= 8 chars and >= 2 character classes 0.8; 6-7 chars or one class 0.6.
 *   token keys:    >= 32 chars, entropy >= 4.0: 0.85; >= 16 chars, entropy >= 3.5, >= 2 classes (or
 *                  hex >= 32): 0.8; >= 12 chars, entropy >= 3.0: 0.6; UUID: 0.6.
 * Placeholders, env/template references, code expressions, file paths, URLs, numbers and booleans: 0.
 */
export function scoreAssignment(kind: Exclude<KeyKind, null>, { value, quoted }: AssignmentValue): number {
  const v = value.trim();
  if (v.length < 6 || isPlaceholder(v)) return 0;
  if (/^\d+(?:\.\d+)?$/.test(v) || /^https?:\/\//i.test(v) || FILE_LIKE.test(v)) return 0;
  if (!quoted && (/[()[\]{}]|&&|\|\||^[!?&|*+<>]/.test(v) || (IDENTIFIER_PATH.test(v) && !/\d/.test(v)))) return 0;
  if (!quoted && v.includes('.') && IDENTIFIER_PATH.test(v)) return 0;
  if (kind === 'password') return scorePassword(v);
  return scoreToken(v);
}

function scorePassword(v: string): number {
  if (v.includes(' ')) return v.length >= 12 ? 0.6 : 0;
  const classes = charClasses(v);
  if (v.length >= 8 && classes >= 2) return 0.8;
  return 0.6;
}

function scoreToken(v: string): number {
  if (v.includes(' ')) return 0;
  if (UUID.test(v)) return 0.6;
  const entropy = shannonEntropy(v);
  const classes = charClasses(v);
  if (v.length >= 32 && entropy >= 4.0 && classes >= 2) return 0.85;
  if (HEX.test(v) && v.length >= 32 && entropy >= 3.0) return 0.8;
  if (v.length >= 16 && entropy >= 3.5 && classes >= 2) return 0.8;
  if (v.length >= 12 && entropy >= 3.0 && classes >= 2) return 0.6;
  return 0;
}
