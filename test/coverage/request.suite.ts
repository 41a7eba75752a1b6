import { CHAT_REQUEST } from './chat-fields';
import { chatRequestFields, messagesRequestFields, pathsOf, responsesRequestFields, type Extract } from './extractors';
import { expectBlockedAt } from '../helpers/audit-probe';
import { eventOf, type CoverageEnv } from './harness';
import { MESSAGES_REQUEST } from './messages-fields';
import { RESPONSES_REQUEST } from './responses-fields';
import { ALLOWED, PHRASE } from './payloads';
import { crossTable, FIELD_TIMEOUT_MS, runCases, sampled, serialize, type Case, type FieldRow, type Json } from './table';

/**
 * Scan coverage of requests: every content field of a wire × every smuggling variant. The smuggled
 * request is refused (the wire's block error naming the variant's category, or 400 duplicate_json_key)
 * with nothing forwarded; its control (the same field, the same variant applied to harmless text)
 * reaches the upstream byte for byte.
 */

interface RequestWire {
  name: string;
  rows: FieldRow[];
  extract: Extract;
  route: string;
  url: (env: CoverageEnv) => string;
  headers: (env: CoverageEnv) => Record<string, string>;
  /** The body with a message of `text` before the others (the allow-listed phrase elsewhere). */
  prepend: (body: Json, text: string) => Json;
  expectBlocked: (res: Response, body: Json, category: string) => void;
  /** The error's [type, code] path in the body of a 400 for a repeated key. */
  duplicateError: (body: Json) => unknown[];
}

const modelOf = (text: string) => (JSON.parse(text) as Json).model;

export const CHAT_WIRE: RequestWire = {
  name: 'chat completions request',
  rows: CHAT_REQUEST,
  extract: chatRequestFields,
  route: '/v1/chat/completions',
  url: (env) => `${env.svc.gatewayUrl}/v1/chat/completions`,
  headers: (env) => ({ authorization: `Bearer ${env.svc.apiKey}` }),
  prepend: (body, text) => ({ ...body, messages: [{ role: 'system', content: text }, ...body.messages] }),
  expectBlocked: (res, body, category) => {
    expect([res.status, body.error?.type, body.error?.code]).toEqual([403, 'security_block', 'input_blocked']);
    expect(body.error.message).toContain(category);
    expect(res.headers.get('x-risk-categories')?.split(',')).toContain(category);
  },
  duplicateError: (body) => [body.error?.type, body.error?.code],
};

export const RESPONSES_WIRE: RequestWire = {
  ...CHAT_WIRE,
  name: 'responses request',
  rows: RESPONSES_REQUEST,
  extract: responsesRequestFields,
  route: '/v1/responses',
  url: (env) => `${env.svc.gatewayUrl}/v1/responses`,
  prepend: (body, text) => {
    const input = body.input === undefined ? [] : typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
    return { ...body, input: [{ role: 'developer', content: text }, ...input] };
  },
};

export const MESSAGES_WIRE: RequestWire = {
  name: 'messages (sensor) request',
  rows: MESSAGES_REQUEST,
  extract: messagesRequestFields,
  route: '/v1/messages',
  url: (env) => `${env.svc.sensorUrl}/v1/messages`,
  headers: (env) => ({ 'x-svc-key': env.svc.apiKey, 'anthropic-version': '2023-06-01', authorization: 'Bearer upstream-token' }),
  prepend: (body, text) => ({ ...body, messages: [{ role: 'user', content: text }, ...body.messages] }),
  expectBlocked: (res, body, category) => {
    expect(res.status).toBe(403);
    expect(body).toEqual({ type: 'error', error: { type: 'permission_error', code: 'content_blocked', message: expect.stringContaining(category) } });
  },
  duplicateError: (body) => [body.type === 'error' ? body.error?.type : 'not the messages shape', body.error?.code],
};

export const requestSuite = (env: () => CoverageEnv, wire: RequestWire) =>
  describe(`${wire.name} fields × smuggling variants`, () => {
    const cases = sampled(crossTable(wire.rows));
    /** The bodies the upstream (of both wires) received for `model`. */
    const received = (model: string) => env().openai.bodies.filter((r) => modelOf(r) === model);
    const send = (raw: string) => fetch(wire.url(env()), { method: 'POST', headers: { 'content-type': 'application/json', ...wire.headers(env()) }, body: raw });
    /** The case's body under its own model name (so concurrent cases stay apart), serialised as the case says. */
    const raw = (c: Case, body: Json, model: string, control: boolean) => {
      return serialize({ ...(c.variant.allowElsewhere ? wire.prepend(body, ALLOWED) : body), model }, control ? c.controlOptions : c.options);
    };

    async function check(c: Case, tag: string): Promise<void> {
      const control = raw(c, c.control, `${tag}-control`, true);
      const ok = await send(control);
      if (ok.status !== 200) throw new Error(`control answered ${ok.status}: ${await ok.text()}`);
      await ok.text();
      expect(received(`${tag}-control`)).toEqual([control]);

      const res = await send(raw(c, c.attack, `${tag}-attack`, false));
      const body = (await res.json()) as Json;
      if (c.variant.kind === 'duplicate-key') {
        expect([res.status, ...wire.duplicateError(body)]).toEqual([400, 'invalid_request', 'duplicate_json_key']);
      } else {
        wire.expectBlocked(res, body, c.variant.category);
        expect(res.headers.get('x-risk-blocked')).toBe('true');
      }
      expect(received(`${tag}-attack`)).toEqual([]);
    }

    it.each(wire.rows.map((r) => [r.label] as const))(
      '%s',
      async (label) => {
        expect(await runCases(cases.filter((c) => c.row.label === label), check)).toEqual([]);
      },
      FIELD_TIMEOUT_MS,
    );

    it('the audit event names the JSON path of each field (plain deny-listed phrase)', async () => {
      await Promise.all(
        wire.rows.map(async (row, i) => {
          const model = `audit-${wire.route}-${i}`;
          expect((await send(JSON.stringify({ ...row.build(PHRASE), model }))).status).toBe(403);
          expectBlockedAt(await eventOf(env().svc, wire.route, model), 'deny_list', pathsOf(row, wire.extract, PHRASE)[0]!);
        }),
      );
    });
  });
