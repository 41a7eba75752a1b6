import OpenAI from 'openai';
import { startFakeSseUpstream, type FakeSseUpstream } from '../fakes/fake-sse-upstream';
import { pgliteTarget } from '../helpers/databases';
import { startTestServices, type TestServices } from '../helpers/services';
import { FRAMINGS, frameStream, type Framing } from '../coverage/sse-framing';

/**
 * Streamed chat completions against an upstream that frames its SSE in every way the event-stream
 * rules allow (test/coverage/sse-framing.ts: line ends, a leading byte order mark, a last event
 * without its blank line, comments, `data:` without the space, multi-line data), and any split into reads. A flagged stream is blocked with none of the flagged text
 * released; an unflagged one reaches the client byte for byte. Parsing does not depend on the
 * database, so this runs on the embedded one only.
 */

const EMAIL = 'ceo@acme-corp.com';
const CARD = '4556737586899855';
type Delta = Record<string, unknown>;

const chunk = (delta: Delta, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'chatcmpl-framed', object: 'chat.completion.chunk', created: 1_763_800_000, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], ...extra });

/** The framings of test/coverage/sse-framing.ts that write the stream in one read (reads are split here by the tests). */
const WHOLE = FRAMINGS.filter((f) => !f.readBytes);

/** The stream's bytes: the chunks, then [DONE] (unless open), framed as `f` says. */
function streamText(f: Framing, deltas: Delta[]): string {
  return frameStream(deltas.map((d) => chunk(d)), f)[0]!.toString('utf8');
}

// The flagged text sits in the first chunk (a BOM hid it) and in the last (an unterminated one was released unread).
const BENIGN: Delta[] = [{ role: 'assistant', content: 'Bonjour, ' }, { content: 'caf\u00e9 \ud83d\ude00 ' }, { content: 'done.' }];
const FLAGGED: Delta[] = [{ role: 'assistant', content: `Mail ${EMAIL} now.` }];
const FLAGGED_LAST: Delta[] = [{ role: 'assistant', content: 'Sure. ' }, { content: `Mail ${EMAIL} now.` }];

describe('streamed chat completions: SSE framing and tool-call arguments', () => {
  let upstream: FakeSseUpstream;
  let svc: TestServices;
  let scriptNo = 0;
  let policyId: string;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${svc.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, any>>);

  /** Scripts the upstream's answer (pieces as separate writes) and sends a streamed request for it. */
  async function stream(pieces: Buffer[], headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: Buffer }> {
    const model = `script-${(scriptNo += 1)}`;
    upstream.scripts.set(model, { pieces, headers });
    const res = await fetch(`${svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const body = Buffer.from(await res.arrayBuffer());
    upstream.scripts.delete(model);
    return { status: res.status, headers: res.headers, body };
  }

  function expectBlocked(body: Buffer, secret: string): void {
    const text = body.toString('utf8');
    expect(text).not.toContain(secret);
    expect(text).toContain('"finish_reason":"content_filter"');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  }

  beforeAll(async () => {
    upstream = await startFakeSseUpstream();
    svc = await startTestServices(pgliteTarget, {
      env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream', ANTHROPIC_BASE_URL: upstream.url.replace(/\/v1$/, '') },
    });
    policyId = (await api('GET', '/v1/policies/?is_default=true')).results[0].id;
    await api('PATCH', `/v1/policies/${policyId}/`, {
      policy_mode: 'IO',
      input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
      output_detectors: [
        { detector_type: 'pii/email', threshold: 'L2', action: 'block' },
        { detector_type: 'pii/credit_card', threshold: 'L2', action: 'block' },
      ],
    });
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });

  describe.each(WHOLE.map((f) => [f.id, f] as const))('%s', (_name, f) => {
    it('passes an unflagged stream byte for byte (written in three pieces)', async () => {
      const raw = Buffer.from(streamText(f, BENIGN));
      const third = Math.floor(raw.length / 3);
      const res = await stream([raw.subarray(0, third), raw.subarray(third, 2 * third), raw.subarray(2 * third)]);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-risk-blocked')).toBe('false');
      expect(res.body.equals(raw)).toBe(true);
    });

    it.each([
      ['in its first chunk', FLAGGED],
      ['in its last chunk', FLAGGED_LAST],
    ])('blocks a stream flagged %s, releasing none of it', async (_where, deltas) => {
      const raw = Buffer.from(streamText(f, deltas));
      expectBlocked((await stream([raw])).body, EMAIL);
    });
  });

  it.each(['\n', '\r\n', '\r'].map((nl) => [JSON.stringify(nl), nl] as const))(
    'split into two reads at every byte offset (%s): unflagged passes byte for byte, flagged is blocked',
    async (_name, nl) => {
      const small = (content: string) => `data: {"choices":[{"index":0,"delta":{"content":"${content}"}}]}${nl}${nl}data: [DONE]${nl}${nl}`;
      const benign = Buffer.from(small('caf\u00e9 ok'));
      const flagged = Buffer.from(small(EMAIL));
      const runs: Array<() => Promise<void>> = [];
      for (let i = 1; i < benign.length; i++) {
        runs.push(async () => expect((await stream([benign.subarray(0, i), benign.subarray(i)])).body.equals(benign)).toBe(true));
      }
      for (let i = 1; i < flagged.length; i++) runs.push(async () => expectBlocked((await stream([flagged.subarray(0, i), flagged.subarray(i)])).body, EMAIL));
      for (let i = 0; i < runs.length; i += 4) await Promise.all(runs.slice(i, i + 4).map((r) => r()));
    },
    120_000,
  );

  it('is read by the official openai SDK in every line-end framing', async () => {
    const client = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    for (const nl of ['\n', '\r\n', '\r']) {
      for (const [deltas, expected, finish] of [
        [BENIGN, 'Bonjour, caf\u00e9 \ud83d\ude00 done.', null],
        [FLAGGED_LAST, 'Sure. ', 'content_filter'],
      ] as const) {
        const model = `script-${(scriptNo += 1)}`;
        upstream.scripts.set(model, { pieces: [Buffer.from(streamText({ id: nl, nl }, [...deltas]))] });
        let text = '';
        let finishReason: string | null = null;
        for await (const c of await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] })) {
          text += c.choices[0]?.delta?.content ?? '';
          finishReason = c.choices[0]?.finish_reason ?? finishReason;
        }
        expect(finishReason).toBe(finish);
        if (finish) expect(expected.startsWith(text)).toBe(true);
        else expect(text).toBe(expected);
        expect(text).not.toContain(EMAIL);
      }
    }
  });

  describe('tool-call arguments spelled with JSON \\u escapes', () => {
    const escape = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    /** Tool-call deltas whose arguments are `args`, cut every 5 characters (inside the escapes). */
    const toolDeltas = (args: string): Delta[] => [
      { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'charge', arguments: '' } }] },
      ...(args.match(/[\s\S]{1,5}/g) ?? []).map((piece) => ({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
    ];

    it('blocks a card number the tool would receive decoded, releasing no complete copy of it', async () => {
      const args = `{"card":"${escape(CARD)}","amount":"12"}`;
      expect(JSON.parse(args).card).toBe(CARD);
      const raw = Buffer.from(streamText({ id: 'LF', nl: '\n' }, toolDeltas(args)));
      const { body } = await stream(Array.from({ length: Math.ceil(raw.length / 64) }, (_, i) => raw.subarray(i * 64, (i + 1) * 64)));
      expectBlocked(body, CARD);
      const released = body
        .toString('utf8')
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .flatMap((e) => JSON.parse(e.slice(6)).choices.map((c: any) => c.delta?.tool_calls?.[0]?.function?.arguments ?? ''))
        .join('');
      expect(args.startsWith(released)).toBe(true);
      expect(released.length).toBeLessThan(args.indexOf(escape(CARD.slice(-4))));
    });

    it('passes escaped arguments that decode to harmless text byte for byte', async () => {
      const raw = Buffer.from(streamText({ id: 'CRLF', nl: '\r\n' }, toolDeltas(`{"city":"${escape('Paris \u00e9t\u00e9')}","days":"3"}`)));
      const { body } = await stream([raw]);
      expect(body.equals(raw)).toBe(true);
    });
  });

  describe('fails closed on what cannot be parsed', () => {
    it('blocks a stream whose event data is not JSON', async () => {
      expectBlocked((await stream([Buffer.from(`data: ${chunk({ content: 'Hi. ' })}\n\ndata: Mail ${EMAIL} now\n\n`)])).body, EMAIL);
    });

    it('blocks a stream event larger than the parser bound (never released unread)', async () => {
      const huge = `data: ${chunk({ content: 'x'.repeat(9 * 1024 * 1024) })}`;
      expectBlocked((await stream([Buffer.from(`data: ${chunk({ content: 'Hi. ' })}\r\r`), Buffer.from(huge)])).body, 'xxxxxxxx');
    });

    it('answers 502 in the envelope to a compressed stream (it cannot be scanned as it passes)', async () => {
      const res = await stream([Buffer.from('not really gzip')], { 'content-encoding': 'gzip' });
      expect(res.status).toBe(502);
      expect(JSON.parse(res.body.toString('utf8')).error).toMatchObject({ type: 'internal_error', code: 'upstream_invalid' });
    });

    it('answers 502 to a compressed stream still arriving, and keeps serving', async () => {
      const pieces = Array.from({ length: 20 }, (_, i) => Buffer.from(`data: ${chunk({ content: `part ${i} ` })}\n\n`));
      const res = await stream(pieces, { 'content-encoding': 'gzip' });
      expect(res.status).toBe(502);
      expect(JSON.parse(res.body.toString('utf8')).error).toMatchObject({ type: 'internal_error', code: 'upstream_invalid' });
      await new Promise((r) => setTimeout(r, 200)); // the upstream's later pieces meet the destroyed body
      expect((await stream([Buffer.from(`data: ${chunk({ content: 'Hi.' })}\n\ndata: [DONE]\n\n`)])).status).toBe(200);
    });
  });

  // The sensor relays messages streams through the output meter (token budgets, the max_output_tokens cut),
  // which reads events with the same parser: a CR-only or BOM-led stream is metered and cut like any other.
  describe('sensor /v1/messages streams', () => {
    const msgEvent = (type: string, data: Record<string, unknown>, nl: string) => `event: ${type}${nl}data: ${JSON.stringify({ type, ...data })}${nl}${nl}`;
    const messagesStream = (nl: string, bom: boolean) =>
      (bom ? '\uFEFF' : '') +
      [
        msgEvent('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'c', usage: { input_tokens: 5, output_tokens: 1 } } }, nl),
        msgEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }, nl),
        msgEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }, nl),
        msgEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ' there, a much longer tail of words' } }, nl),
        msgEvent('content_block_stop', { index: 0 }, nl),
        msgEvent('message_stop', {}, nl),
      ].join('');
    const send = async (raw: string, maxTokens: number) => {
      const model = `script-${(scriptNo += 1)}`;
      upstream.scripts.set(model, { pieces: [Buffer.from(raw)] });
      const res = await fetch(`${svc.sensorUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-key': svc.apiKey, 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model, max_tokens: maxTokens, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
    };

    beforeAll(async () => {
      const limits = { rate_limits_enabled: true, requests_per_minute: 100000, burst_multiplier: 1, tokens_per_minute: 10_000_000, max_input_tokens: 8192, max_input_characters: 64_000, max_output_tokens: 3, cost_limit_per_day_cents: 0 };
      await api('PATCH', `/v1/policies/${policyId}/`, { rate_limits: limits });
    });

    it.each([
      ['CR-only', '\r', false],
      ['CRLF with a leading BOM', '\r\n', true],
      ['LF with a leading BOM', '\n', true],
    ])('cuts a %s stream at max_output_tokens', async (_name, nl, bom) => {
      const raw = messagesStream(nl, bom);
      const { status, body } = await send(raw, 3);
      expect(status).toBe(200);
      const text = body.toString('utf8');
      expect(text).toContain('Hello');
      expect(text).not.toContain('longer tail');
      expect(text).toContain('"stop_reason":"max_tokens"');
    });
  });
});
