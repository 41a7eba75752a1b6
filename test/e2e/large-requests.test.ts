import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { pgliteTarget } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * Issue #16, cross-tenant 503s, end to end: HTTP → gateway → real gRPC → detection → fake upstream.
 * While 5–9 MB chat completions are being scanned, small ones all get their verdicts (no 503), and so
 * do the large ones (the starter policy logs e-mail addresses: each answer names pii/email).
 */

const MB = 1024 * 1024;
const LARGE_SIZES = [5 * MB, 9 * MB, 7 * MB];
const SMALL_REQUESTS = 30;

function largeContent(bytes: number): string {
  const tail = ' contact jane.doe@acme-corp.com';
  return 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, bytes - tail.length) + tail;
}

describe('large /v1/detect bodies next to small ones (gateway e2e)', () => {
  let svc: TestServices;
  let upstream: FakeOpenAI;
  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    const env = { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream-0001', DETECTION_TIMEOUT_MS: '20000' };
    svc = await startTestServices(pgliteTarget, { services: ['detection', 'gateway'], env });
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });

  it('small requests all answer 200 while large ones are scanned; the large ones get verdicts too', async () => {
    const detect = (content: string) =>
      postJson(
        `${svc.gatewayUrl}/v1/chat/completions`,
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] },
        { authorization: `Bearer ${svc.apiKey}` },
      );
    const started = Date.now();
    const large = LARGE_SIZES.map((bytes) => detect(largeContent(bytes)));
    const small = [];
    for (let i = 0; i < SMALL_REQUESTS; i += 1) {
      small.push(detect(`note ${i}: write to bob${i}@acme-corp.com`));
      if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [largeRes, smallRes] = await Promise.all([Promise.all(large), Promise.all(small)]);
    process.stdout.write(
      `large-requests e2e: small ${smallRes.filter((r) => r.status === 200).length}/${SMALL_REQUESTS} 200 ` +
        `(statuses ${[...new Set(smallRes.map((r) => r.status))].join(',')}), ` +
        `large ${largeRes.map((r) => r.status).join(',')}, ${Date.now() - started} ms\n`,
    );
    expect(smallRes.map((r) => r.status)).toEqual(smallRes.map(() => 200));
    for (const r of smallRes) expect(r.headers.get('x-risk-categories')).toContain('pii/email');
    expect(largeRes.map((r) => r.status)).toEqual(largeRes.map(() => 200));
    for (const r of largeRes) expect(r.headers.get('x-risk-categories')).toContain('pii/email');
  }, 120_000);
});
