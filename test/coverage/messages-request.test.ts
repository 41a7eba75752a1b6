import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import type { TestServices } from '../helpers/services';
import { messagesRequestFields, pathsOf } from './extractors';
import { eventOf, expectFindingAt, startCoverageServices } from './harness';
import { MESSAGES_REQUEST } from './messages-fields';
import { ALLOWED, PHRASE } from './payloads';
import { crossTable, FIELD_TIMEOUT_MS, runCases, sampled, serialize, type Case, type Json } from './table';

/**
 * Scan coverage, messages requests through the sensor: every content field (messages-fields.ts) ×
 * every smuggling variant (payloads.ts). The smuggled request is refused with the messages API's error
 * shape (403 permission_error content_blocked naming the category, or 400 for a duplicate key) with
 * nothing forwarded; its control reaches the upstream byte for byte.
 */

const table = crossTable(MESSAGES_REQUEST);
const cases = sampled(table);

describe('scan coverage: messages (sensor) request fields × smuggling variants', () => {
  let anthropic: FakeAnthropic;
  let svc: TestServices;
  const received = (model: string) => anthropic.received.filter((r) => (JSON.parse(r.body.toString('utf8')) as Json).model === model).map((r) => r.body.toString('utf8'));
  const send = (raw: string) =>
    fetch(`${svc.sensorUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-key': svc.apiKey, 'anthropic-version': '2023-06-01', authorization: 'Bearer upstream-token' },
      body: raw,
    });
  const raw = (c: Case, body: Json, model: string, control: boolean) => {
    const messages = c.variant.allowElsewhere ? [{ role: 'user', content: ALLOWED }, ...body.messages] : body.messages;
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
      expect([res.status, body.type, body.error?.type, body.error?.code]).toEqual([400, 'error', 'invalid_request', 'duplicate_json_key']);
    } else {
      expect(res.status).toBe(403);
      expect(body).toEqual({ type: 'error', error: { type: 'permission_error', code: 'content_blocked', message: expect.stringContaining(c.variant.category) } });
      expect(res.headers.get('x-risk-blocked')).toBe('true');
    }
    expect(received(`${tag}-attack`)).toEqual([]);
  }

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    svc = await startCoverageServices({ ANTHROPIC_BASE_URL: anthropic.url });
  }, 60_000);
  afterAll(async () => {
    await svc?.dispose();
    await anthropic?.close();
  });

  it.each(MESSAGES_REQUEST.map((r) => [r.label] as const))('%s', async (label) => {
    expect(await runCases(cases.filter((c) => c.row.label === label), check)).toEqual([]);
  }, FIELD_TIMEOUT_MS);

  it('the audit event names the JSON path of each field (plain deny-listed phrase)', async () => {
    await Promise.all(
      MESSAGES_REQUEST.map(async (row, i) => {
        const model = `audit-${i}`;
        expect((await send(JSON.stringify({ ...row.build(PHRASE), model }))).status).toBe(403);
        expectFindingAt(await eventOf(svc, '/v1/messages', model), 'deny_list', pathsOf(row, messagesRequestFields, PHRASE)[0]!);
      }),
    );
  });
});
