import { CredentialDetector } from '../../../../src/detection/detectors/secrets/credential-detector';
import { classifyKey, isPlaceholder, scoreAssignment, shannonEntropy } from '../../../../src/detection/detectors/secrets/secret-value';

const detector = new CredentialDetector();
const scan = (text: string) =>
  detector
    .detect({ text, direction: 'input' }, new AbortController().signal)
    .map((f) => ({ match: text.slice(f.start, f.end), confidence: f.confidence }));
const best = (text: string) => Math.max(0, ...scan(text).map((f) => f.confidence));

// Made-up but realistic key material (random characters, no real credentials).
const B62 = 'R8mK2xQ9vL4nT7pW1zY5bC3dF6gH0jA2sE4uKq8vN2pL5wXk29fLmQ8vRt3WpZ7nYb1cD4eG6hJ0aS5uK2oP9iL3mN8qT';
const body = (n: number) => B62.slice(0, n);

describe('CredentialDetector', () => {
  it.each([
    [`export AWS_ACCESS_KEY_ID=AKIAZ4X7Q2LMN5P3R6TW`, 'AKIAZ4X7Q2LMN5P3R6TW', 0.95],
    [`aws_secret_access_key = 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`, '9fJ2kLm8Qx/7vR+3pTzW1nB5yH0cD4eG6aS8uK2o', 0.95],
    [`token: ghp_${body(36)}`, `ghp_${body(36)}`, 0.97],
    [`GITHUB_TOKEN=github_pat_${body(22)}_${body(59)}`, `github_pat_${body(22)}_${body(59)}`, 0.97],
    [`SLACK=xoxb-418273650192-7391046285731-${body(24)}`, `xoxb-418273650192-7391046285731-${body(24)}`, 0.95],
    [`stripe.api_key = 'sk_live_${body(24)}'`, `sk_live_${body(24)}`, 0.97],
    [`OPENAI_API_KEY=sk-proj-${body(48)}`, `sk-proj-${body(48)}`, 0.97],
    [`ANTHROPIC_API_KEY=sk-ant-api03-${body(80)}`, `sk-ant-api03-${body(80)}`, 0.97],
    [`key = "AIza${body(35)}"`, `AIza${body(35)}`, 0.95],
    [`X-Svc-Key: svc_sk_${body(40)}`, `svc_sk_${body(40)}`, 0.97],
    ['DATABASE_URL=postgres://app:S3cr3tPw0rd!@db.internal:5432/app', 'postgres://app:S3cr3tPw0rd!@db.internal', 0.9],
    ['password = "Tr0ub4dor&3x"', 'Tr0ub4dor&3x', 0.8],
    [`client_secret: "${body(32)}"`, body(32), 0.85],
  ])('reports the secret in %j', (text, match, confidence) => {
    expect(scan(text)).toEqual([{ match, confidence }]);
  });

  it('reports a PEM private key block as one span', () => {
    const key = `-----BEGIN RSA PRIVATE KEY-----\n${body(64)}\n${body(64)}\n-----END RSA PRIVATE KEY-----`;
    expect(scan(`key:\n${key}\nend`)).toEqual([{ match: key, confidence: 0.99 }]);
  });

  it('validates JWTs by decoding the header', () => {
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jwt = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: 'u-1', role: 'admin' })}.${body(43)}`;
    expect(scan(`Authorization: Bearer ${jwt}`)).toEqual([{ match: jwt, confidence: 0.9 }]);
    const noAlg = `${part({ typ: 'JWT', kid: 'x' })}.${part({ sub: 'u-1' })}.${body(43)}`;
    expect(best(noAlg)).toBe(0);
  });

  it('finds a token wrapped in a URL or header, not just the wrapper', () => {
    expect(scan(`https://x-access-token:ghs_${body(36)}@github.com/o/r.git`)).toEqual([
      { match: `ghs_${body(36)}`, confidence: 0.97 },
    ]);
  });

  it('scores provider-prefixed formats above generic entropy-based ones', () => {
    const prefixed = best(`ghp_${body(36)}`);
    const generic = best(`api_key: "${body(32)}"`);
    const password = best('password = "Tr0ub4dor&3x"');
    expect(prefixed).toBeGreaterThanOrEqual(0.9);
    expect(generic).toBeGreaterThanOrEqual(0.6);
    expect(generic).toBeLessThan(prefixed);
    expect(password).toBeLessThanOrEqual(0.8);
  });

  it.each([
    ['export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE'],
    ['OPENAI_API_KEY=sk-...'],
    ['api_key: "YOUR_API_KEY"'],
    ['export GITHUB_TOKEN=<token>'],
    ['password: changeme'],
    ['token: ${GITHUB_TOKEN}'],
    ["api_key = os.environ['API_KEY']"],
    ['password = getPassword()'],
    ['ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'],
    ['commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3'],
    ['request_id: 123e4567-e89b-12d3-a456-426614174000'],
    ['"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="'],
    ['max_tokens: 4096'],
    ['The author passed the test with a token of appreciation.'],
    ['postgres://user:password@localhost:5432/app'],
    ['-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----'],
    ['private_key_path: /etc/ssl/private/server.key'],
  ])('does not report %j at L2', (text) => {
    expect(best(text)).toBeLessThan(0.75);
  });

  it('classifies key names', () => {
    expect(classifyKey('DB_PASSWORD')).toBe('password');
    expect(classifyKey('clientSecret')).toBe('token');
    expect(classifyKey('x-api-key')).toBe('token');
    expect(classifyKey('SIGNING_KEY')).toBe('token');
    expect(classifyKey('max_tokens')).toBeNull();
    expect(classifyKey('password_min_length')).toBeNull();
    expect(classifyKey('author')).toBeNull();
    expect(classifyKey('primary_key')).toBeNull();
  });

  it('measures entropy and recognises placeholders', () => {
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('abcd')).toBe(2);
    expect(isPlaceholder('YOUR_API_KEY')).toBe(true);
    expect(isPlaceholder('${TOKEN}')).toBe(true);
    expect(isPlaceholder('1234567890abcdef')).toBe(true);
    expect(isPlaceholder('Tr0ub4dor&3x')).toBe(false);
    expect(scoreAssignment('token', { value: 'short', quoted: true })).toBe(0);
    expect(scoreAssignment('token', { value: '123e4567-e89b-12d3-a456-426614174000', quoted: true })).toBe(0.6);
  });

  it('honours an aborted signal', () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const text = `token = "${body(32)}"\n`.repeat(500);
    expect(() => detector.detect({ text, direction: 'input' }, controller.signal)).toThrow('stop');
  });

  it('keeps at most 1000 findings on a large input', () => {
    const text = `AKIAZ4X7Q2LMN5P3R6TW `.repeat(3000);
    expect(detector.detect({ text, direction: 'input' }, new AbortController().signal)).toHaveLength(1000);
  });
});
