import OpenAI from 'openai';
import { startFakeSseUpstream, type FakeSseUpstream } from '../fakes/fake-sse-upstream';
import { pgliteTarget } from '../helpers/databases';
import { patchDefaultPolicy, startTestServices, type TestServices } from '../helpers/services';

/**
 * Adaptive release of a streamed answer (detection/stream-release.ts), through the gateway's chat
 * completions with the official openai SDK: scanned text reaches the client while the upstream is still
 * streaming — the upstream pauses after its first events until the client has read text (an explicit
 * step, not a delay) — and a flagged entity that arrives after released prose still ends the stream
 * with none of it released.
 */

const EMAIL = 'ceo@acme-corp.com';
/** Opens the gate anyway after this long, so the old rule (text released only once 128 characters follow it) fails instead of hanging. */
const GATE_FALLBACK_MS = 15_000;

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-release', object: 'chat.completion.chunk', created: 1_763_800_000, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;

describe('streamed chat completions: adaptive release', () => {
  let upstream: FakeSseUpstream;
  let svc: TestServices;
  let scriptNo = 0;

  beforeAll(async () => {
    upstream = await startFakeSseUpstream();
    svc = await startTestServices(pgliteTarget, { env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' } });
    await patchDefaultPolicy(svc, {
      policy_mode: 'IO',
      input_detectors: [],
      output_detectors: [
        { detector_type: 'pii/email', threshold: 'L2', action: 'block' },
        { detector_type: 'pii/credit_card', threshold: 'L2', action: 'block' },
        { detector_type: 'pii/phone_number', threshold: 'L2', action: 'block' },
      ],
    });
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });

  /**
   * Streams an answer whose first piece is `before` (content deltas, one event each) and, once the
   * client has read text (or the fallback fired), `after`. Returns what the client read, and what it had
   * read when the gate opened.
   */
  async function run(before: string[], after: string[]) {
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let gateOpened = false;
    const fallback = setTimeout(() => {
      gateOpened = true;
      openGate();
    }, GATE_FALLBACK_MS);
    const model = `release-${(scriptNo += 1)}`;
    const first = chunk({ role: 'assistant', content: '' }) + before.map((content) => chunk({ content })).join('');
    const rest = [...after.map((content) => chunk({ content })), chunk({}, 'stop'), 'data: [DONE]\n\n'];
    upstream.scripts.set(model, { pieces: [Buffer.from(first), ...rest.map((r) => Buffer.from(r))], gate });
    const client = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    let text = '';
    let readBeforeGate: string | undefined;
    let finishReason: string | null = null;
    try {
      for await (const c of await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] })) {
        text += c.choices[0]?.delta?.content ?? '';
        finishReason = c.choices[0]?.finish_reason ?? finishReason;
        if (text.length > 0 && readBeforeGate === undefined) {
          readBeforeGate = gateOpened ? '' : text;
          gateOpened = true;
          openGate();
        }
      }
    } finally {
      clearTimeout(fallback);
      openGate();
      upstream.scripts.delete(model);
    }
    return { text, readBeforeGate: readBeforeGate ?? '', finishReason };
  }

  it('delivers the first text chunk of a short answer before the upstream sends its last event', async () => {
    // 40 characters: with the old fixed rule nothing of it left before 128 more characters (or the end) arrived.
    const before = ['The', ' answer', ' is', ' short', ' and', ' plain', ' so', ' far'];
    const after = [' and', ' ends', ' here.'];
    const { text, readBeforeGate, finishReason } = await run(before, after);
    expect(readBeforeGate.length).toBeGreaterThan(0);
    expect(before.join('').startsWith(readBeforeGate)).toBe(true);
    expect(text).toBe(before.join('') + after.join(''));
    expect(finishReason).toBe('stop');
  }, 60_000);

  it('holds a phone number split across events until it is complete and scanned, then blocks the rest', async () => {
    const before = ['Sure,', ' you', ' can', ' reach', ' the', ' office', ' at', ' +1 (415', ') 555'];
    const after = ['-0100 or', ` mail ${EMAIL}`, ' any', ' time.'];
    const { text, readBeforeGate, finishReason } = await run(before, after);
    expect(readBeforeGate.length).toBeGreaterThan(0);
    // Everything before the number went out; nothing of the number (held whole across events) did.
    expect(text).toBe('Sure, you can reach the office at');
    expect(finishReason).toBe('content_filter');
  }, 60_000);
});
