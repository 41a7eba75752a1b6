import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import type { TestServices } from '../helpers/services';
import { CHAT_REQUEST } from './chat-fields';
import { chatRequestFields, pathsOf } from './extractors';
import { eventOf, expectFindingAt, startCoverageServices } from './harness';
import { ALLOWED, PHRASE } from './payloads';
import { crossTable, FIELD_TIMEOUT_MS, runCases, sampled, serialize, type Case, type Json } from './table';

/**
 * Scan coverage, chat completions requests: every content field (chat-fields.ts) × every smuggling
 * variant (payloads.ts). The smuggled request is refused (403 input_blocked with the variant's category,
 * or 400 duplicate_json_key) with nothing forwarded; its control (the same field, the same variant
 * applied to harmless text) reaches the upstream byte for byte.
 */

const table = crossTable(CHAT_REQUEST);
const cases = sampled(table);

describe('scan coverage: chat completions request fields × smuggling variants', () => {
  let openai: FakeOpenAI;
  let svc: TestServices;
  const received = (model: string) => openai.received.filter((r) => (JSON.parse(r.body.toString('utf8')) as Json).model === model).map((r) => r.body.toString('utf8'));
  const send = (raw: string) =>
    fetch(`${svc.gatewayUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' }, body: raw });
  /** The case's body under its own model name (so concurrent cases stay apart), serialised as the case says. */
  const raw = (c: Case, body: Json, model: string, control: boolean) => {
    const messages = c.variant.allowElsewhere ? [{ role: 'system', content: ALLOWED }, ...body.messages] : body.messages;
    return serialize({ ...body, model, messages }, control ? c.controlOptions : c.options);
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
      expect([res.status, body.error?.type, body.error?.code]).toEqual([400, 'invalid_request', 'duplicate_json_key']);
    } else {
      expect([res.status, body.error?.type, body.error?.code]).toEqual([403, 'security_block', 'input_blocked']);
      expect(body.error.message).toContain(c.variant.category);
      expect(res.headers.get('x-risk-blocked')).toBe('true');
      expect(res.headers.get('x-risk-categories')?.split(',')).toContain(c.variant.category);
    }
    expect(received(`${tag}-attack`)).toEqual([]);
  }

  beforeAll(async () => {
    openai = await startFakeOpenAI();
    svc = await startCoverageServices({ OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'sk-upstream' });
  }, 60_000);
  afterAll(async () => {
    await svc?.dispose();
    await openai?.close();
  });

  it.each(CHAT_REQUEST.map((r) => [r.label] as const))('%s', async (label) => {
    expect(await runCases(cases.filter((c) => c.row.label === label), check)).toEqual([]);
  }, FIELD_TIMEOUT_MS);

  it('the audit event names the JSON path of each field (plain deny-listed phrase)', async () => {
    await Promise.all(
      CHAT_REQUEST.map(async (row, i) => {
        const model = `audit-${i}`;
        expect((await send(JSON.stringify({ ...row.build(PHRASE), model }))).status).toBe(403);
        expectFindingAt(await eventOf(svc, '/v1/chat/completions', model), 'deny_list', pathsOf(row, chatRequestFields, PHRASE)[0]!);
      }),
    );
  });
});

