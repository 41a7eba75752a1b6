import { createParser } from 'eventsource-parser';
import { expectBlockedAt } from '../helpers/audit-probe';
import { CHAT_RESPONSE, CHAT_STREAM, RESPONSE_ONLY } from './chat-fields';
import { chatResponseFields, chatStreamFields, messagesResponseFieldsOf, messagesStreamFields, pathsOf, responsesResponseFields, responsesStreamFields, type Extract } from './extractors';
import { eventOf, type CoverageEnv } from './harness';
import { MESSAGES_RESPONSE, MESSAGES_STREAM } from './messages-fields';
import { RESPONSES_RESPONSE, RESPONSES_STREAM, responsesStreamEvents } from './responses-fields';
import { ATTACK, EMAIL, PHRASE, uEscape, VARIANTS, type Variant } from './payloads';
import { FRAMINGS, frameStream, LF, type Framing } from './sse-framing';
import { crossTable, FIELD_TIMEOUT_MS, runCases, sampled, serialize, STRIDE, touches, type Case, type FieldRow, type Json } from './table';

/**
 * Scan coverage of responses: every field of a JSON answer and of a stream's events × every smuggling
 * variant (payloads.ts), streams also in every SSE framing (sse-framing.ts), and upstream error bodies.
 * A flagged JSON answer becomes the wire's 403 block error; a flagged stream ends with the wire's
 * block event, and neither releases the smuggled text. Each control (the same field and variant,
 * harmless text) reaches the client exactly as the upstream sent it.
 */

const plain = VARIANTS[0] as Variant;

type FramedCase = Case & { framing?: Framing };

/** The client must never see the smuggled text (nor, for escaped documents, its escaped spelling). */
function tellsOf(c: Case): string[] {
  const v = c.variant;
  const tells = [v.kind === 'text' ? v.smuggle(v.payload) : v.payload, ...(v.kind === 'doc' ? [uEscape(v.payload)] : [])];
  if (v.payload === ATTACK) tells.push('system prompt verbatim');
  if (v.payload === EMAIL) tells.push('example-corp.com');
  return tells;
}

/**
 * What of the smuggled text a stream must never release a piece of: the tells with the wrapper prose of
 * a text variant ("Please … now.", "You can write to … for details.", the allow-listed sentence before
 * the phrase) left out. Adaptive release (docs/endpoints.md, Streams) sends prose as soon as it is
 * scanned, so the words before the payload may reach the client before the payload arrives and blocks;
 * not one 6-character piece of the payload itself may.
 */
function streamTellsOf(c: Case): string[] {
  const v = c.variant;
  if (v.kind !== 'text') return tellsOf(c);
  const [smuggled, wrapper] = [v.smuggle(v.payload), v.smuggle('')];
  let pre = 0;
  while (pre < wrapper.length && wrapper[pre] === smuggled[pre]) pre += 1;
  let post = 0;
  while (pre + post < wrapper.length && wrapper[wrapper.length - 1 - post] === smuggled[smuggled.length - 1 - post]) post += 1;
  return [smuggled.slice(pre, smuggled.length - post), ...tellsOf(c).slice(1)];
}

const created = 1_763_800_000;
/** Every string value the client was shown in a stream's events (parsed as the standard says), the block event excepted. */
function releasedText(raw: string, shown: (data: Json) => unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  const parser = createParser({ onEvent: (e) => e.data.startsWith('{') && walk(shown(JSON.parse(e.data) as Json)) });
  parser.feed(raw);
  parser.feed('\n\n');
  return out.join('');
}

interface ResponseWire {
  name: string;
  route: string;
  jsonRows: FieldRow[];
  streamRows: FieldRow[];
  jsonExtract: Extract;
  streamExtract: Extract;
  send: (env: CoverageEnv, model: string, stream: boolean) => Promise<Response>;
  /** The data of each event of a stream row's body (the wire's first and last events added). */
  streamDatas: (body: Json, options: Case['options']) => string[];
  /** The stream ends with `data: [DONE]`. */
  done: boolean;
  /** What the client was shown of one event's data (the block event shows nothing). */
  shown: (data: Json) => unknown;
  expectJsonBlocked: (status: number, body: Json, category: string) => void;
  expectStreamBlocked: (text: string) => void;
  /** The [status, code] of the answer to a body repeating a key. */
  repeated: (status: number, body: Json) => unknown[];
  /** An upstream error answer echoing `t`. */
  errorBody: (t: string) => Json;
}

/** A JSON POST to the gateway with the project key. */
const postGateway = (env: CoverageEnv, path: string, body: Json) =>
  fetch(`${env.svc.gatewayUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${env.svc.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

export const CHAT_OUT: ResponseWire = {
  name: 'chat completions response',
  route: '/v1/chat/completions',
  jsonRows: CHAT_RESPONSE,
  streamRows: CHAT_STREAM,
  jsonExtract: chatResponseFields,
  streamExtract: chatStreamFields,
  send: (env, model, stream) => postGateway(env, '/v1/chat/completions', { model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  streamDatas: (body, options) => {
    const base = { id: 'chatcmpl-coverage', object: body.legacy ? 'text_completion' : 'chat.completion.chunk', created, model: 'gpt-4o-mini' };
    const chunk = (choice: Json, finish: string | null = null) => serialize({ ...base, choices: [{ index: 0, ...choice, logprobs: null, finish_reason: finish }] }, options);
    return [
      ...(body.legacy ? [] : [chunk({ delta: { role: 'assistant', content: '' } })]),
      ...(body.choices as Json[]).map((c) => chunk(c)),
      chunk(body.legacy ? { text: '' } : { delta: {} }, 'stop'),
    ];
  },
  done: true,
  shown: (data) => data.choices,
  expectJsonBlocked: (status, body, category) => {
    expect([status, body.error?.type, body.error?.code]).toEqual([403, 'security_block', 'output_blocked']);
    expect(body.error.message).toContain(category);
  },
  expectStreamBlocked: (text) => {
    expect(text).toContain('"finish_reason":"content_filter"');
    expect(text).not.toContain('"finish_reason":"stop"');
    expect(text).toMatch(/data: \[DONE\](\r\n|\r|\n){2}$/);
  },
  repeated: (status, body) => [status, body.error?.code],
  errorBody: (t) => ({ error: { message: `Invalid value: ${t}`, type: 'invalid_request_error', param: 'messages', code: null } }),
};

export const MESSAGES_OUT: ResponseWire = {
  name: 'messages (sensor) response',
  route: '/v1/messages',
  jsonRows: MESSAGES_RESPONSE,
  streamRows: MESSAGES_STREAM,
  jsonExtract: messagesResponseFieldsOf,
  streamExtract: messagesStreamFields,
  send: (env, model, stream) =>
    fetch(`${env.svc.sensorUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-key': env.svc.apiKey, 'anthropic-version': '2023-06-01', authorization: 'Bearer upstream-token' },
      body: JSON.stringify({ model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }] }),
    }),
  streamDatas: (body, options) =>
    [
      body.start ?? { type: 'message_start', message: { id: 'msg_coverage', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } },
      ...(body.events as Json[]),
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } },
      { type: 'message_stop' },
    ].map((e) => serialize(e, options)),
  done: false,
  shown: (data) => (data.type === 'error' ? [] : data),
  expectJsonBlocked: (status, body, category) => {
    expect(status).toBe(403);
    expect(body).toEqual({ type: 'error', error: { type: 'permission_error', code: 'output_blocked', message: expect.stringContaining(category) } });
  },
  expectStreamBlocked: (text) => {
    // The block is an `event: error` carrying the messages-API error, and the stream ends there.
    const tail = /event: error\ndata: (\{[^\n]*\})\n\n$/.exec(text);
    expect(tail && JSON.parse(tail[1]!)).toEqual({ type: 'error', error: { type: 'permission_error', code: 'output_blocked', message: expect.any(String) } });
    expect(text).not.toContain('"message_stop"');
  },
  repeated: (status, body) => [status, body.type === 'error' ? body.error?.code : 'not the messages shape'],
  errorBody: (t) => ({ type: 'error', error: { type: 'invalid_request_error', message: `messages.0.content: ${t}` } }),
};

export const RESPONSES_OUT: ResponseWire = {
  ...CHAT_OUT,
  name: 'responses response',
  route: '/v1/responses',
  jsonRows: RESPONSES_RESPONSE,
  streamRows: RESPONSES_STREAM,
  jsonExtract: responsesResponseFields,
  streamExtract: responsesStreamFields,
  send: (env, model, stream) => postGateway(env, '/v1/responses', { model, stream, input: 'hi' }),
  streamDatas: (body, options) => responsesStreamEvents(body).map((e, i) => serialize({ ...e, sequence_number: i }, options)),
  done: false,
  // The block event shows nothing (its response echoes only the stream's own response.created).
  shown: (data) => (data.type === 'response.failed' ? [] : { ...data, type: null }),
  expectStreamBlocked: (text) => {
    const tail = /event: response\.failed\ndata: (\{[^\n]*\})\n\n$/.exec(text);
    expect(tail && JSON.parse(tail[1]!)).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'security_block' }, output: [] } });
    expect(text).not.toContain('"type":"response.completed"');
  },
  errorBody: (t) => ({ error: { message: `Invalid value: ${t}`, type: 'invalid_request_error', param: 'input', code: null } }),
};

export const responseSuite = (env: () => CoverageEnv, wire: ResponseWire) =>
  describe(`${wire.name} fields × smuggling variants`, () => {
    const json = crossTable(wire.jsonRows, VARIANTS, RESPONSE_ONLY);
    const stream = crossTable(wire.streamRows, VARIANTS, RESPONSE_ONLY);
    const errorRow: FieldRow = { label: 'upstream error body', build: wire.errorBody };
    const errors = crossTable([errorRow], VARIANTS, RESPONSE_ONLY);
    /** Framings other than LF: every stream field with the plain payload, and the first with every variant (sampled likewise). */
    const framed = FRAMINGS.slice(1).flatMap((framing, m) =>
      stream.cases
        .filter((c) => c.variant === plain || c.row === wire.streamRows[0])
        .filter((_c, k) => k % STRIDE === m % STRIDE)
        .map((c) => ({ ...c, framing })),
    );
    const frame = (body: Json, options: Case['options'], framing: Framing) => frameStream(wire.streamDatas(body, options), framing, wire.done);

    async function answer(model: string, pieces: Buffer[], isStream: boolean, status = 200) {
      env().openai.scripts.set(model, { pieces, status, headers: isStream ? undefined : { 'content-type': 'application/json' } });
      try {
        const res = await wire.send(env(), model, isStream);
        const bytes = Buffer.from(await res.arrayBuffer()); // not res.text(): it drops a leading BOM
        return { status: res.status, headers: res.headers, text: bytes.toString('utf8'), bytes };
      } finally {
        env().openai.scripts.delete(model);
      }
    }

    /** A JSON answer (or, with `status`, an upstream error): the control passes, the attack is blocked or refused. */
    const checkJson = (status: number) =>
      async function (c: Case, tag: string): Promise<void> {
        const control = serialize(c.control, c.controlOptions);
        const ok = await answer(`${tag}-control`, [Buffer.from(control)], false, status);
        expect(ok.status).toBe(status);
        if (status === 200 || wire === MESSAGES_OUT) expect(ok.text).toBe(control);
        else expect(JSON.parse(ok.text).error.message).toContain(JSON.parse(control).error.message); // re-enveloped, message kept

        const res = await answer(`${tag}-attack`, [Buffer.from(serialize(c.attack, c.options))], false, status);
        const body = JSON.parse(res.text) as Json;
        if (c.variant.kind === 'duplicate-key') {
          // Fails closed: the copies could be read differently, so the body cannot be scanned reliably.
          expect(wire.repeated(res.status, body)).toEqual([502, 'upstream_invalid']);
        } else {
          wire.expectJsonBlocked(res.status, body, c.variant.category);
          expect(res.headers.get('x-risk-blocked')).toBe('true');
        }
        for (const tell of tellsOf(c)) expect(res.text).not.toContain(tell);
      };

    async function checkStream(c: FramedCase, tag: string): Promise<void> {
      const framing = c.framing ?? LF;
      const control = frame(c.control, c.controlOptions, framing);
      const ok = await answer(`${tag}-control`, control, true);
      expect(ok.status).toBe(200);
      expect(ok.bytes.equals(Buffer.concat(control))).toBe(true);

      const res = await answer(`${tag}-attack`, frame(c.attack, c.options, framing), true);
      expect(res.status).toBe(200); // the stream had begun: the block is its final event
      wire.expectStreamBlocked(res.text);
      const released = releasedText(res.text, wire.shown);
      for (const tell of streamTellsOf(c)) expect([tell, touches(released, tell)]).toEqual([tell, false]); // not even a piece of it
    }

    describe('JSON answers', () => {
      const cases = sampled(json);
      it.each(wire.jsonRows.map((r) => [r.label] as const))(
        '%s',
        async (label) => {
          expect(await runCases(cases.filter((c) => c.row.label === label), checkJson(200))).toEqual([]);
        },
        FIELD_TIMEOUT_MS,
      );
    });

    describe('streams (LF framing; the payload split across events)', () => {
      const cases = sampled(stream);
      it.each(wire.streamRows.map((r) => [r.label] as const))(
        '%s',
        async (label) => {
          expect(await runCases(cases.filter((c) => c.row.label === label), checkStream)).toEqual([]);
        },
        FIELD_TIMEOUT_MS,
      );
    });

    describe('streams in every SSE framing', () => {
      it.each(FRAMINGS.slice(1).map((f) => [f.id] as const))(
        '%s',
        async (id) => {
          expect(await runCases(framed.filter((c) => c.framing.id === id), checkStream)).toEqual([]);
        },
        FIELD_TIMEOUT_MS,
      );
    });

    it('upstream error bodies (400 echoing the payload), every variant', async () => {
      expect(await runCases(errors.cases, checkJson(400))).toEqual([]);
    }, FIELD_TIMEOUT_MS);

    it('the audit event names the JSON path of each field (plain deny-listed phrase)', async () => {
      const rows = [...wire.jsonRows.map((r) => [r, false] as const), ...wire.streamRows.map((r) => [r, true] as const)];
      await Promise.all(
        rows.map(async ([row, isStream], i) => {
          const model = `audit-out-${wire.route}-${i}`;
          const body = row.build(PHRASE);
          await answer(model, isStream ? frame(body, {}, LF) : [Buffer.from(JSON.stringify(body))], isStream);
          const path = pathsOf(row, isStream ? wire.streamExtract : wire.jsonExtract, PHRASE)[0]!;
          expectBlockedAt(await eventOf(env().svc, wire.route, model), 'deny_list', path);
        }),
      );
    });
  });
