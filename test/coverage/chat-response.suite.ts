import { createParser } from 'eventsource-parser';
import { CHAT_RESPONSE, CHAT_STREAM, RESPONSE_ONLY } from './chat-fields';
import { chatResponseFields, chatStreamFields, pathsOf } from './extractors';
import { eventOf, expectFindingAt, type CoverageEnv } from './harness';
import { ATTACK, EMAIL, PHRASE, uEscape, VARIANTS, type Variant } from './payloads';
import { FRAMINGS, frameStream, LF, type Framing } from './sse-framing';
import { crossTable, FIELD_TIMEOUT_MS, runCases, sampled, serialize, STRIDE, touches, type Case, type Json } from './table';

/**
 * Scan coverage, chat completions responses: every field of a JSON answer and of stream deltas
 * (chat-fields.ts) × every smuggling variant (payloads.ts), and streams in every SSE framing
 * (sse-framing.ts). A flagged JSON answer becomes the 403 output_blocked error; a flagged stream ends
 * with the content_filter chunk and [DONE], and neither releases the smuggled text. Each control (the
 * same field and variant, harmless text) reaches the client exactly as the upstream sent it.
 */

const json = crossTable(CHAT_RESPONSE, VARIANTS, RESPONSE_ONLY);
const stream = crossTable(CHAT_STREAM, VARIANTS, RESPONSE_ONLY);
const plain = VARIANTS[0] as Variant;
/** Framings other than LF: every stream field with the plain payload, and delta.content with every variant (sampled likewise). */
const framed = FRAMINGS.slice(1).flatMap((framing, m) =>
  stream.cases
    .filter((c) => c.variant === plain || c.row === CHAT_STREAM[0])
    .filter((_c, k) => k % STRIDE === m % STRIDE)
    .map((c) => ({ ...c, framing })),
);

type FramedCase = Case & { framing?: Framing };

/** The client must never see the smuggled text (nor, for escaped documents, its escaped spelling). */
function tellsOf(c: Case): string[] {
  const v = c.variant;
  const tells = [v.kind === 'text' ? v.smuggle(v.payload) : v.payload, ...(v.kind === 'doc' ? [uEscape(v.payload)] : [])];
  if (v.payload === ATTACK) tells.push('system prompt verbatim');
  if (v.payload === EMAIL) tells.push('example-corp.com');
  return tells;
}

const created = 1_763_800_000;
function streamDatas(body: Json, options: Case['options']): string[] {
  const base = { id: 'chatcmpl-coverage', object: body.legacy ? 'text_completion' : 'chat.completion.chunk', created, model: 'gpt-4o-mini' };
  const chunk = (choice: Json, finish: string | null = null) => serialize({ ...base, choices: [{ index: 0, ...choice, logprobs: null, finish_reason: finish }] }, options);
  return [
    ...(body.legacy ? [] : [chunk({ delta: { role: 'assistant', content: '' } })]),
    ...(body.choices as Json[]).map((c) => chunk(c)),
    chunk(body.legacy ? { text: '' } : { delta: {} }, 'stop'),
  ];
}

/** Every string value in the choices of the events the client received (what it was shown), parsed as the standard says. */
function releasedText(raw: string): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  const parser = createParser({ onEvent: (e) => e.data.startsWith('{') && walk((JSON.parse(e.data) as Json).choices) });
  parser.feed(raw);
  parser.feed('\n\n');
  return out.join('');
}

export const chatResponseSuite = (env: () => CoverageEnv) => describe('chat completions response fields × smuggling variants', () => {
  const send = async (model: string, isStream: boolean) => {
    const res = await fetch(`${env().svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env().svc.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: isStream, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const bytes = Buffer.from(await res.arrayBuffer()); // not res.text(): it drops a leading BOM
    return { status: res.status, headers: res.headers, text: bytes.toString('utf8'), bytes };
  };
  async function answer(model: string, pieces: Buffer[], isStream: boolean) {
    env().openai.scripts.set(model, { pieces, headers: isStream ? undefined : { 'content-type': 'application/json' } });
    try {
      return await send(model, isStream);
    } finally {
      env().openai.scripts.delete(model);
    }
  }

  async function checkJson(c: Case, tag: string): Promise<void> {
    const control = serialize(c.control, c.controlOptions);
    const ok = await answer(`${tag}-control`, [Buffer.from(control)], false);
    expect([ok.status, ok.text]).toEqual([200, control]);

    const res = await answer(`${tag}-attack`, [Buffer.from(serialize(c.attack, c.options))], false);
    if (c.variant.kind === 'duplicate-key') {
      // Fails closed: the copies could be read differently, so the body cannot be scanned reliably.
      expect([res.status, JSON.parse(res.text).error?.code]).toEqual([502, 'upstream_invalid']);
    } else {
      const { error } = JSON.parse(res.text);
      expect([res.status, error?.type, error?.code]).toEqual([403, 'security_block', 'output_blocked']);
      expect(error.message).toContain(c.variant.category);
      expect(res.headers.get('x-risk-blocked')).toBe('true');
      expect(res.headers.get('x-risk-categories')?.split(',')).toContain(c.variant.category);
    }
    for (const tell of tellsOf(c)) expect(res.text).not.toContain(tell);
  }

  async function checkStream(c: FramedCase, tag: string): Promise<void> {
    const framing = c.framing ?? LF;
    const control = frameStream(streamDatas(c.control, c.controlOptions), framing);
    const ok = await answer(`${tag}-control`, control, true);
    expect(ok.status).toBe(200);
    expect(ok.bytes.equals(Buffer.concat(control))).toBe(true);

    const res = await answer(`${tag}-attack`, frameStream(streamDatas(c.attack, c.options), framing), true);
    expect(res.status).toBe(200); // the stream had begun: the block is its final event
    expect(res.text).toContain('"finish_reason":"content_filter"');
    expect(res.text).not.toContain('"finish_reason":"stop"');
    expect(res.text).toMatch(/data: \[DONE\](\r\n|\r|\n){2}$/);
    const released = releasedText(res.text);
    for (const tell of tellsOf(c)) expect([tell, touches(released, tell)]).toEqual([tell, false]); // not even a piece of it
  }

  describe('JSON answers', () => {
    const cases = sampled(json);
    it.each(CHAT_RESPONSE.map((r) => [r.label] as const))('%s', async (label) => {
      expect(await runCases(cases.filter((c) => c.row.label === label), checkJson)).toEqual([]);
    }, FIELD_TIMEOUT_MS);
  });

  describe('streams (LF framing; the payload split across deltas)', () => {
    const cases = sampled(stream);
    it.each(CHAT_STREAM.map((r) => [r.label] as const))('%s', async (label) => {
      expect(await runCases(cases.filter((c) => c.row.label === label), checkStream)).toEqual([]);
    }, FIELD_TIMEOUT_MS);
  });

  describe('streams in every SSE framing', () => {
    it.each(FRAMINGS.slice(1).map((f) => [f.id] as const))('%s', async (id) => {
      expect(await runCases(framed.filter((c) => c.framing.id === id), checkStream)).toEqual([]);
    }, FIELD_TIMEOUT_MS);
  });

  it('the audit event names the JSON path of each field (plain deny-listed phrase)', async () => {
    const rows = [...CHAT_RESPONSE.map((r) => [r, false] as const), ...CHAT_STREAM.map((r) => [r, true] as const)];
    await Promise.all(
      rows.map(async ([row, isStream], i) => {
        const model = `audit-${i}`;
        const body = row.build(PHRASE);
        await answer(model, isStream ? frameStream(streamDatas(body, {}), LF) : [Buffer.from(JSON.stringify(body))], isStream);
        const path = pathsOf(row, isStream ? chatStreamFields : chatResponseFields, PHRASE)[0]!;
        expectFindingAt(await eventOf(env().svc, '/v1/chat/completions', model), 'deny_list', path);
      }),
    );
  });
});
