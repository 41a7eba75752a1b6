import { createServer, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import { openStorage } from '../../src/storage/data-source';
import { STORAGE_TARGETS, pgliteTarget } from '../helpers/databases';
import { gqlRequest } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import { until } from '../helpers/until';

/** Issue 16: failed-closed events say why; a graceful shutdown under load loses no event. */

/** A TCP listener that accepts and never answers: gRPC calls to it overrun their deadline. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('fail_reason of failed-closed requests', () => {
  async function failedEvent(detectionAddress: string, env: Record<string, string> = {}) {
    const svc: TestServices = await startTestServices(pgliteTarget, { services: ['gateway'], env: { DETECTION_ADDRESS: detectionAddress, ...env } });
    try {
      const auth = { authorization: `Bearer ${svc.apiKey}` };
      const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, auth);
      expect(res.status).toBe(503);
      expect(res.json.error.code).toBe('detection_unavailable');
      const rest = await until(async () => {
        const r = await fetch(`${svc.gatewayUrl}/v1/events/`, { headers: auth });
        const body = (await r.json()) as { count: number; results: Array<{ response_status: number; fail_reason: string | null }> };
        return body.count > 0 ? body.results[0] : undefined;
      }, 5000);
      const gql = await gqlRequest(svc.gatewayUrl, svc.apiKey, '{ events { results { response_status fail_reason } } }');
      return { rest, gql: gql.json.data.events.results[0] as { fail_reason: string | null } };
    } finally {
      await svc.dispose();
    }
  }

  it('detection unreachable: detection_unavailable, in REST and GraphQL', async () => {
    const closed = await silentServer();
    await closed.close(); // nothing listens on this port any more
    const { rest, gql } = await failedEvent(`127.0.0.1:${closed.port}`);
    expect(rest).toEqual(expect.objectContaining({ response_status: 503, fail_reason: 'detection_unavailable' }));
    expect(gql.fail_reason).toBe('detection_unavailable');
  });

  it('detection not answering within DETECTION_TIMEOUT_MS: detection_timeout', async () => {
    const silent = await silentServer();
    try {
      const { rest, gql } = await failedEvent(`127.0.0.1:${silent.port}`, { DETECTION_TIMEOUT_MS: '300' });
      expect(rest).toEqual(expect.objectContaining({ response_status: 503, fail_reason: 'detection_timeout' }));
      expect(gql.fail_reason).toBe('detection_timeout');
    } finally {
      await silent.close();
    }
  });
});

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('graceful shutdown under load on %s', (_name, target) => {
  it('every scanned request has its event: 0 lost', async () => {
    const svc = await startTestServices(target);
    const auth = { authorization: `Bearer ${svc.apiKey}` };
    let answered = 0;
    let refused = 0;
    const statuses: Record<number, number> = {};
    const worker = async () => {
      for (let i = 0; i < 100; i++) {
        try {
          const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: `mail me at user${i}@example.com` }, auth);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          answered++;
        } catch {
          refused++;
          return; // the server is gone
        }
      }
    };
    const load = Promise.all(Array.from({ length: 16 }, worker));
    await until(async () => (answered >= 300 ? true : undefined), 20_000);
    await svc.running.close(); // what SIGTERM does in main.ts, with 16 clients still sending
    await load;

    // Events by the status they answered: every answered request has exactly one, scanned (200) or
    // refused while the server was closing (503 shutting_down, before any route work).
    const sql = 'SELECT response_status AS status, count(*)::int AS n FROM security_events GROUP BY response_status';
    let rows: Array<{ status: number; n: number }>;
    if (svc.databaseUrl) {
      const c = new Client({ connectionString: svc.databaseUrl });
      await c.connect();
      rows = (await c.query<{ status: number; n: number }>(sql)).rows;
      await c.end();
    } else {
      const storage = await openStorage({ dataDir: svc.dataDir });
      rows = await storage.query<{ status: number; n: number }>(sql);
      await storage.close();
    }
    const stored = Object.fromEntries(rows.map((r) => [String(r.status), r.n]));
    process.stderr.write(`[shutdown under load, ${target.name}] answered ${answered}, refused ${refused}, events stored ${JSON.stringify(stored)} ${JSON.stringify(statuses)}\n`);
    expect(answered).toBeGreaterThanOrEqual(300);
    expect(Object.keys(statuses).filter((s) => s !== '200' && s !== '503')).toEqual([]);
    expect(stored['200']).toBe(statuses[200]);
    expect(stored['503'] ?? 0).toBe(statuses[503] ?? 0);
    await svc.dispose();
  }, 60_000);
});
