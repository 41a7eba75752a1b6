import RE2 from 're2';
import { isPlaceholder, isPlaceholderBody, shannonEntropy } from './secret-value';

/**
 * Provider-prefixed credential signatures, as data: an RE2 pattern (non-capturing groups only; all rules
 * are joined into one alternation, one capture group per rule, compiled once at module load), and a
 * scorer that validates the matched text and returns a confidence (0 = reject).
 *
 * Alternatives are tried leftmost-first, so more specific rules come before more general ones
 * (`sk-ant-` before `sk-proj-` before a bare `sk-`).
 */

export interface CredentialRule {
  id: string;
  pattern: string;
  /** The match must not be followed by a character of this class (fixed-length formats). */
  endClass?: RegExp;
  /**
   * For formats longer than an RE2 repetition may be (1000): extends the match that ends at `end` by a
   * linear scan of `text` and returns the new end, or -1 to reject the match.
   */
  extend?(text: string, end: number): number;
  /** Where the secret starts inside the match, when the match also holds its key ("Authorization: Bearer "). */
  valueOffset?(match: string): number;
  /** Offset inside the match where scanning resumes, for formats that can wrap another credential. */
  rescanFrom?(match: string): number;
  score(match: string): number;
}

const ALNUM = /[A-Za-z0-9]/;
const TOKEN_CHAR = /[A-Za-z0-9_-]/;

/** Confidence `high` unless the part after the prefix is obviously made up (then 0.3). */
function prefixed(prefixLength: number, high: number): (m: string) => number {
  return (m) => (isPlaceholderBody(m.slice(prefixLength)) ? 0.3 : high);
}

function scorePem(m: string): number {
  const header = m.indexOf('-----', 5);
  const endAt = m.indexOf('-----END');
  const body = m.slice(header + 5, endAt < 0 ? m.length : endAt).replace(/\s+/g, '');
  const base64 = body.replace(/[^A-Za-z0-9+/=]/g, '');
  if (/\.\.\.|<|your|redacted|example/i.test(body) && base64.length < 64) return 0.6;
  if (base64.length >= 64 && shannonEntropy(base64) >= 4.5) return 0.99;
  // A bare header (the key itself cut off or on the following lines in a different form).
  return 0.75;
}

export const PEM_MAX = 12_000;

/** Up to the matching END line (within PEM_MAX), else over the base64 lines that follow the header. */
function extendPem(text: string, end: number): number {
  const stop = text.indexOf('-----END', end);
  if (stop >= 0 && stop - end <= PEM_MAX) {
    const close = text.indexOf('-----', stop + 8);
    if (close >= 0 && close - stop <= 60) return close + 5;
  }
  let i = end;
  const limit = Math.min(text.length, end + PEM_MAX);
  while (i < limit && /[A-Za-z0-9+/=\s]/.test(text.charAt(i))) i++;
  while (i > end && /\s/.test(text.charAt(i - 1))) i--;
  return i;
}

const B64URL = /[A-Za-z0-9_-]/;
export const JWT_PART_MAX = 8192;

/** The rest of the payload, a dot, and a signature of at least 16 characters. */
function extendJwt(text: string, end: number): number {
  let i = end;
  const limit = Math.min(text.length, end + JWT_PART_MAX);
  while (i < limit && B64URL.test(text.charAt(i))) i++;
  if (text.charAt(i) !== '.') return -1;
  const sigStart = ++i;
  const sigLimit = Math.min(text.length, sigStart + JWT_PART_MAX);
  while (i < sigLimit && B64URL.test(text.charAt(i))) i++;
  return i - sigStart >= 16 ? i : -1;
}

function base64UrlJson(part: string): Record<string, unknown> | null {
  try {
    const json = Buffer.from(part, 'base64url').toString('utf8');
    const parsed: unknown = JSON.parse(json);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** JWT: the header must decode to a JSON object with "alg". The jwt.io sample token scores low. */
function scoreJwt(m: string): number {
  const [headerPart = '', payloadPart = ''] = m.split('.');
  const header = base64UrlJson(headerPart);
  if (!header || typeof header.alg !== 'string') return 0;
  const payload = base64UrlJson(payloadPart);
  if (!payload) return 0.6;
  if (payload.name === 'John Doe' && payload.sub === '1234567890') return 0.3;
  if (header.alg.toLowerCase() === 'none') return 0.7;
  return 0.9;
}

/** `scheme://user:password@host`: the password must not be a placeholder. */
function scoreConnectionString(m: string): number {
  const afterScheme = m.indexOf('://') + 3;
  const at = m.lastIndexOf('@');
  const userinfo = m.slice(afterScheme, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0) return 0;
  const password = decodeSafe(userinfo.slice(colon + 1));
  const user = userinfo.slice(0, colon);
  if (password.length < 3 || isPlaceholder(password) || password.toLowerCase() === user.toLowerCase()) return 0.3;
  if (/^(?:pass|pw|pwd|password\d*|secret\d*)$/i.test(password)) return 0.3;
  return /^https?:/i.test(m) ? 0.85 : 0.9;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function scoreAwsSecret(m: string): number {
  const value = m.slice(-40);
  if (isPlaceholderBody(value) || /EXAMPLE/.test(value)) return 0.3;
  return shannonEntropy(value) >= 4.0 ? 0.95 : 0.6;
}

/** `sk-` followed by 32+ characters and no more specific prefix: OpenAI legacy or another provider. */
function scoreBareSk(m: string): number {
  const body = m.slice(3);
  if (isPlaceholderBody(body)) return 0.3;
  return shannonEntropy(body) >= 4.0 ? 0.85 : 0.5;
}

function bearerValueOffset(m: string): number {
  return m.length - m.replace(/^[^:=]*[:=]\s*["']?\S+\s+/, '').length;
}

function scoreBearer(m: string): number {
  const token = m.replace(/^[^:]*:\s*\S+\s+/, '');
  if (isPlaceholder(token) || isPlaceholderBody(token)) return 0;
  const entropy = shannonEntropy(token);
  if (token.length >= 20 && entropy >= 4.0) return 0.85;
  return token.length >= 16 && entropy >= 3.5 ? 0.75 : 0;
}

export const CREDENTIAL_RULES: readonly CredentialRule[] = [
  {
    id: 'pem-private-key',
    pattern: String.raw`-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----`,
    extend: extendPem,
    score: scorePem,
  },
  { id: 'anthropic', pattern: String.raw`\bsk-ant-[A-Za-z0-9_\-]{20,250}`, score: prefixed(7, 0.97) },
  { id: 'openai-project', pattern: String.raw`\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,250}`, score: prefixed(8, 0.97) },
  { id: 'openai-legacy', pattern: String.raw`\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}`, endClass: ALNUM, score: prefixed(3, 0.97) },
  { id: 'stripe-live', pattern: String.raw`\b[sr]k_live_[A-Za-z0-9]{16,247}`, score: prefixed(8, 0.97) },
  { id: 'stripe-test', pattern: String.raw`\b[sr]k_test_[A-Za-z0-9]{16,247}`, score: prefixed(8, 0.8) },
  { id: 'stripe-webhook', pattern: String.raw`\bwhsec_[A-Za-z0-9]{24,64}`, score: prefixed(6, 0.9) },
  { id: 'sk-generic', pattern: String.raw`\bsk-[A-Za-z0-9_\-]{32,250}`, score: scoreBareSk },
  { id: 'github', pattern: String.raw`\bgh[pousr]_[A-Za-z0-9]{36,251}`, score: prefixed(4, 0.97) },
  { id: 'github-fine-grained', pattern: String.raw`\bgithub_pat_[A-Za-z0-9_]{60,255}`, score: prefixed(11, 0.97) },
  { id: 'gitlab', pattern: String.raw`\bglpat-[A-Za-z0-9_\-]{20,64}`, score: prefixed(6, 0.95) },
  { id: 'slack-token', pattern: String.raw`\bxox[abposr]-[0-9]{6,16}-[A-Za-z0-9\-]{8,240}`, score: prefixed(5, 0.95) },
  {
    id: 'slack-webhook',
    pattern: String.raw`https://hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{16,32}`,
    score: (m) => (isPlaceholderBody(m.slice(m.lastIndexOf('/') + 1)) ? 0.3 : 0.95),
  },
  {
    id: 'aws-access-key-id',
    pattern: String.raw`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z2-7]{16}`,
    endClass: ALNUM,
    score: (m) => (/EXAMPLE/.test(m) || isPlaceholderBody(m.slice(4)) ? 0.3 : /^(?:AKIA|ASIA)/.test(m) ? 0.95 : 0.9),
  },
  {
    id: 'aws-secret-access-key',
    pattern: String.raw`(?i:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)["']?\s{0,4}(?:=|:|=>)\s{0,4}["']?[A-Za-z0-9/+=]{40}`,
    endClass: /[A-Za-z0-9/+=]/,
    valueOffset: (m) => m.length - 40,
    score: scoreAwsSecret,
  },
  { id: 'google-api-key', pattern: String.raw`\bAIza[0-9A-Za-z_\-]{35}`, endClass: TOKEN_CHAR, score: prefixed(4, 0.95) },
  { id: 'google-oauth-secret', pattern: String.raw`\bGOCSPX-[A-Za-z0-9_\-]{28}`, endClass: TOKEN_CHAR, score: prefixed(7, 0.95) },
  {
    id: 'jwt',
    pattern: String.raw`\beyJ[A-Za-z0-9_\-]{8,1000}\.eyJ[A-Za-z0-9_\-]{8,1000}`,
    extend: extendJwt,
    score: scoreJwt,
  },
  { id: 'svc-api-key', pattern: String.raw`\bsvc_sk_[A-Za-z0-9]{32,128}`, endClass: ALNUM, score: prefixed(7, 0.97) },
  { id: 'npm', pattern: String.raw`\bnpm_[A-Za-z0-9]{36}`, endClass: ALNUM, score: prefixed(4, 0.95) },
  { id: 'pypi', pattern: String.raw`\bpypi-AgE[A-Za-z0-9_\-]{50,250}`, score: prefixed(8, 0.95) },
  { id: 'huggingface', pattern: String.raw`\bhf_[A-Za-z0-9]{34,40}`, endClass: ALNUM, score: prefixed(3, 0.9) },
  { id: 'sendgrid', pattern: String.raw`\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}`, endClass: TOKEN_CHAR, score: prefixed(3, 0.95) },
  { id: 'digitalocean', pattern: String.raw`\bdo[opr]_v1_[a-f0-9]{64}`, endClass: ALNUM, score: prefixed(7, 0.95) },
  { id: 'shopify', pattern: String.raw`\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}`, endClass: ALNUM, score: prefixed(6, 0.95) },
  { id: 'azure-storage', pattern: String.raw`AccountKey=[A-Za-z0-9+/]{86}==`, score: prefixed(11, 0.95) },
  { id: 'telegram-bot', pattern: String.raw`\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}`, endClass: TOKEN_CHAR, score: prefixed(12, 0.9) },
  {
    id: 'connection-string',
    rescanFrom: (m) => m.indexOf('://') + 3,
    pattern: String.raw`\b(?i:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|jdbc:[a-z]{2,12}|ftps?|sftp|smtps?|ldaps?|https?)://[^\s:@/"'<>]{1,128}:[^\s@/"'<>]{1,256}@[A-Za-z0-9._\-\[\]]{1,255}`,
    score: scoreConnectionString,
  },
  {
    id: 'authorization-header',
    pattern: String.raw`(?i:authorization|proxy-authorization)["']?\s{0,4}[:=]\s{0,4}["']?(?i:bearer|token|basic)\s{1,4}[A-Za-z0-9._~+/\-]{16,1000}=*`,
    valueOffset: bearerValueOffset,
    rescanFrom: bearerValueOffset,
    score: scoreBearer,
  },
];

/** All rules in one RE2 alternation: capture group i+1 is rule i. */
export const CREDENTIAL_RE = new RE2(CREDENTIAL_RULES.map((r) => `(${r.pattern})`).join('|'), 'gu');

/**
 * Generic assignments: a key containing a secret word, an assignment operator, and a quoted or bare
 * value. Groups: 1 key, 2 "…", 3 '…', 4 `…`, 5 bare. The key is checked by classifyKey afterwards.
 */
const BT = '`';
const ASSIGNMENT_KEY = String.raw`([A-Za-z0-9_.\-]{0,48}(?i:pass|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|[a-z_\-]key|credential|auth|bearer)[A-Za-z0-9_.\-]{0,32})`;
const ASSIGNMENT_OP = String.raw`["']?\]?\s{0,4}(?::=|=>|=|:)\s{0,4}`;
const ASSIGNMENT_VALUE =
  String.raw`(?:"([^"\r\n]{1,512})"|'([^'\r\n]{1,512})'|` +
  `${BT}([^${BT}\\r\\n]{1,512})${BT}|` +
  String.raw`([^\s"',;` + BT + ']{1,512}))';
export const ASSIGNMENT_RE = new RE2(ASSIGNMENT_KEY + ASSIGNMENT_OP + ASSIGNMENT_VALUE, 'gu');
