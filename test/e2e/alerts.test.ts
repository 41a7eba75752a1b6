import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signAlert } from '../../src/management/events/alert-notifier';
import { pgliteTarget } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('alert action → signed webhook', () => {
  const secret = 'test-webhook-secret-0123456789';
  let server: Server;
  let url: string;
  const received: Received[] = [];
  let failFirst = 1;
  let svc: TestServices;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        if (failFirst > 0) {
          failFirst -= 1;
          res.writeHead(503).end();
        } else res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/security`;
    svc = await startTestServices(pgliteTarget, { env: { ALERT_WEBHOOK_URL: url, ALERT_WEBHOOK_SECRET: secret } });
  });
  afterAll(async () => {
    await svc?.dispose();
    await new Promise((r) => server.close(r));
  });

  it('sends one signed alert per request with an alert finding, retried after a 5xx, without the matched text', async () => {
    const auth = { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' };
    const policies = (await (await fetch(`${svc.gatewayUrl}/v1/policies/`, { headers: auth })).json()) as { results: Array<{ id: string; is_default: boolean }> };
    const def = policies.results.find((p) => p.is_default)!;
    await fetch(`${svc.gatewayUrl}/v1/policies/${def.id}/`, {
      method: 'PATCH',
      headers: auth,
      body: JSON.stringify({ input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'alert' }] }),
    });

    const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'contact ceo@acme-corp.com now' }, auth);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ blocked: false, categories: [{ type: 'pii/email', action: 'alert' }] });
    const clean = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'nothing to see' }, auth);
    expect(clean.json.categories).toEqual([]);

    const deadline = Date.now() + 10_000;
    while (received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(received).toHaveLength(2); // one 503, one retry accepted; the clean request sent nothing
    const [first, retry] = received as [Received, Received];
    expect(retry.headers['x-alert-id']).toBe(first.headers['x-alert-id']);
    const ts = Number(retry.headers['x-alert-timestamp']);
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60);
    expect(retry.headers['x-alert-signature']).toBe(signAlert(secret, ts, retry.body));
    expect(retry.headers['x-alert-signature']).not.toBe(signAlert('wrong-secret-0123456789', ts, retry.body));
    const payload = JSON.parse(retry.body);
    expect(payload).toMatchObject({
      type: 'security.alert',
      path: '/v1/detect',
      blocked: false,
      response_status: 200,
      // Where it matched (offsets in `content`), never what.
      alerts: [{ type: 'pii/email', confidence: expect.any(Number), action: 'alert', matches: [{ path: 'content', start: 8, end: 25, signal: 'signature:pii/email', score: expect.any(Number) }] }],
    });
    expect(retry.body).not.toContain('acme-corp.com');
    expect(retry.body).not.toContain('contact');
    expect(retry.body).not.toContain(svc.apiKey);
  }, 30000);
});
