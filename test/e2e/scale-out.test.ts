import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { generateApiKey } from '../../src/shared/api-key';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { postgresTarget, TEST_DATABASE_URL } from '../helpers/databases';
import { MAIN, run, waitFor, type Proc } from '../helpers/main-process';
import { gqlRequest } from '../helpers/management-clients';
import { postJson } from '../helpers/services';
import { until } from '../helpers/until';

/**
 * Scale-out as it is deployed (docs/deployment.md): one detection service and two gateway replicas, each
 * its own `node dist/main.js …` process, on one PostgreSQL and one Redis. Proves that
 *  (a) a policy's limit is shared: the replicas' combined traffic reaches it, neither alone does;
 *  (b) a policy change made through one replica applies on the other within a second (LISTEN/NOTIFY:
 *      AUTH_CACHE_TTL_MS is 300 s here, so the cache's expiry cannot be what does it);
 *  (c) both replicas' audit events land in the one database;
 *  (d) SIGTERM to a replica with requests in flight loses nothing: every request it accepted completes,
 *      and every audit event is in the database by the time the process has exited.
 * Only the upstream provider is fake (test/fakes/fake-openai.ts).
 */

const TEST_REDIS_URL = process.env.TEST_REDIS_URL;
/** The bound for a change made through one replica to apply on the other. */
const PROPAGATION_BOUND_MS = 1000;

interface Replica {
  name: string;
  proc: Proc;
  url: string;
  dataDir: string;
}

/** Polls `probe` (every 10 ms) until `ok`, for at most PROPAGATION_BOUND_MS; returns the last value and the time it took. */
async function withinPropagationBound<T>(probe: () => Promise<T>, ok: (value: T) => boolean): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    const ms = Date.now() - started;
    if (ok(value) || ms > PROPAGATION_BOUND_MS) return { value, ms };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

(TEST_DATABASE_URL && TEST_REDIS_URL ? describe : describe.skip)('scale-out: detection + two gateway replicas on one PostgreSQL and one Redis', () => {
  const key = generateApiKey();
  const prefix = `test:scale-out:${randomBytes(6).toString('hex')}:`;
  let db: Awaited<ReturnType<typeof postgresTarget.create>>;
  let upstream: FakeOpenAI;
  let detection: Proc;
  let a: Replica;
  let b: Replica;
  let sql: Client;

  const startReplica = async (name: string, detectionAddress: string): Promise<Replica> => {
    const dataDir = mkdtempSync(join(tmpdir(), `gw-scale-${name}-`)); // this replica's audit spool only
    const proc = run(['gateway'], {
      PORT: '0',
      DATABASE_URL: db.databaseUrl!,
      REDIS_URL: TEST_REDIS_URL!,
      LIMITS_KEY_PREFIX: prefix,
      DETECTION_ADDRESS: detectionAddress,
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: key,
      OPENAI_BASE_URL: upstream.url,
      OPENAI_API_KEY: 'sk-upstream-scale-out',
      AUTH_CACHE_TTL_MS: '300000',
      PLATFORM_TRAFFIC_RPM: '1000000',
      PLATFORM_MANAGEMENT_RPM: '1000000',
      // A shutdown step that overruns this bound logs "shutdown step failed" (asserted absent in (d)).
      SHUTDOWN_TIMEOUT_MS: '20000',
    });
    const [, url] = await waitFor(() => proc.stdout().match(/Ready: gateway (\S+)/), `replica ${name} to be ready`, 45_000);
    return { name, proc, url: url!, dataDir };
  };

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: run `npm run build` (npm test does it)');
    upstream = await startFakeOpenAI();
    db = await postgresTarget.create();
    sql = new Client({ connectionString: db.databaseUrl });
    await sql.connect();
    detection = run(['detection'], { DETECTION_ADDRESS: '127.0.0.1:0' });
    const [, detectionAddress] = await waitFor(() => detection.stdout().match(/Ready: detection grpc:\/\/(\S+)/), 'detection to be ready', 45_000);
    // Both replicas start at once on the empty database (as a Deployment's pods do): one migrates and
    // bootstraps under the advisory lock, the other waits and finds it done.
    [a, b] = await Promise.all([startReplica('a', detectionAddress!), startReplica('b', detectionAddress!)]);
  }, 120_000);

  afterAll(async () => {
    for (const p of [a?.proc, b?.proc, detection]) {
      if (p && p.child.exitCode === null) {
        p.child.kill('SIGTERM');
        await p.exited;
      }
    }
    for (const r of [a, b]) if (r) rmSync(r.dataDir, { recursive: true, force: true });
    await sql?.end();
    await db?.cleanup();
    await upstream?.close();
    const redis = new Redis(TEST_REDIS_URL!, { maxRetriesPerRequest: 1 });
    try {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      await redis.quit();
    }
  }, 60_000);

  const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
  const detect = (r: Replica, content: string, options: { key?: string; session?: string } = {}) =>
    postJson(`${r.url}/v1/detect`, { content }, { ...bearer(options.key ?? key), ...(options.session ? { 'x-agent-session-id': options.session } : {}) });
  const manage = async (r: Replica, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${r.url}${path}`, {
      method,
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  /** Stored audit events by session id (the X-Agent-Session-Id each request of this suite carries). */
  const storedEvents = async (sessionPrefix: string) => {
    const { rows } = await sql.query<{ session_id: string; response_status: number }>(
      'SELECT session_id, response_status FROM security_events WHERE session_id LIKE $1 ORDER BY session_id',
      [`${sessionPrefix}%`],
    );
    return rows;
  };

  /** Detect requests to `r`, one after another, until stopped; status 0 = no answer at all. */
  const keepSending = (r: Replica) => {
    let stopped = false;
    const sent: Array<{ session: string; status: number }> = [];
    const loop = (async () => {
      for (let i = 0; !stopped; i++) {
        const session = `stop-other-${String(i).padStart(4, '0')}`;
        sent.push({ session, status: await detect(r, 'mail me at jo@acme-corp.com', { session }).then((res) => res.status, () => 0) });
      }
    })();
    return {
      sent,
      stop: async () => {
        stopped = true;
        await loop;
      },
    };
  };

  it('start together on an empty database: exactly one bootstraps, both serve with the same key', async () => {
    const bootstrapped = [a, b].filter((r) => /Bootstrap: created organization/.test(r.proc.stdout()));
    expect(bootstrapped).toHaveLength(1);
    for (const r of [a, b]) {
      const health = await fetch(`${r.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ checks: { database: { status: 'up' }, detection: { status: 'up' }, redis: { status: 'up' } }, limits: { store: 'redis' } });
      expect((await detect(r, 'mail me at jo@acme-corp.com')).json.categories.map((c: { type: string }) => c.type)).toEqual(['pii/email']);
    }
  });

  it('(a) a policy\'s request limit is shared: the combined traffic of both replicas reaches it, neither alone does', async () => {
    // requests_per_minute 1 × burst 10: a bucket of 10 that refills one request a minute, so the count is exact.
    const policy = await manage(b, 'POST', '/v1/policies/', {
      name: 'metered',
      rate_limits: { rate_limits_enabled: true, requests_per_minute: 1, burst_multiplier: 10 },
    });
    expect(policy.status).toBe(201);
    const project = await manage(a, 'POST', '/v1/projects/', { name: 'metered app', policy_id: policy.json.id });
    expect(project.status).toBe(201);
    const metered = project.json.raw_key as string;

    const answers = [];
    for (let i = 0; i < 12; i++) {
      const replica = i % 2 === 0 ? a : b;
      answers.push(await detect(replica, 'hello', { key: metered, session: `limit-${String(i).padStart(2, '0')}-${replica.name}` }));
    }
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
    // Each replica had served 5 when it refused: only the shared count can have reached 10.
    expect(answers.slice(0, 10).map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
    expect(answers.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(Array(12).fill('10'));
    for (const refused of answers.slice(10)) {
      expect(refused.json.error).toMatchObject({ type: 'rate_limit', code: 'rate_limit_exceeded', details: { scope: 'requests_per_minute', limit: 1 } });
    }
  });

  it('(b) a policy change made through one replica applies on the other within a second, both ways', async () => {
    const policies = await manage(a, 'GET', '/v1/policies/');
    const defaultId = policies.json.results.find((p: { is_default: boolean }) => p.is_default).id as string;
    // Both replicas have the key → project → policy in their caches (TTL 300 s) before the changes.
    expect((await detect(a, 'orange falcon')).json.blocked).toBe(false);
    expect((await detect(b, 'violet heron')).json.blocked).toBe(false);

    // Through A's REST API, seen on B.
    const patched = await manage(a, 'PATCH', `/v1/policies/${defaultId}/`, { deny_list: { entries: ['orange falcon'], match_type: 'contains' } });
    expect(patched.status).toBe(200);
    const onB = await withinPropagationBound(() => detect(b, 'orange falcon'), (r) => r.json.blocked === true);
    expect(onB.value.json.blocked).toBe(true);

    // Through B's GraphQL API, seen on A.
    const mutation = 'mutation ($id: ID!, $input: UpdatePolicyInput!) { updatePolicy(id: $id, input: $input) { id } }';
    const updated = await gqlRequest(b.url, key, mutation, { id: defaultId, input: { deny_list: { entries: ['violet heron'], match_type: 'contains' } } });
    expect(updated.json.errors).toBeUndefined();
    const onA = await withinPropagationBound(() => detect(a, 'violet heron'), (r) => r.json.blocked === true);
    expect(onA.value.json.blocked).toBe(true);
    expect((await detect(a, 'orange falcon')).json.blocked).toBe(false); // the whole new policy, not a merge
    process.stderr.write(`[scale-out] policy change applied on the other replica after ${onB.ms} ms (A→B) and ${onA.ms} ms (B→A)\n`);
  });

  it('(c) both replicas\' audit events land in the one database, readable through either replica', async () => {
    const rows = await until(async () => {
      const r = await storedEvents('limit-');
      return r.length >= 12 ? r : undefined;
    }, 10_000);
    expect(rows.map((r) => [r.session_id, r.response_status])).toEqual(
      Array.from({ length: 12 }, (_, i) => [`limit-${String(i).padStart(2, '0')}-${i % 2 === 0 ? 'a' : 'b'}`, i < 10 ? 200 : 429]),
    );
    // B's API lists an event A wrote, and A's lists one B wrote.
    const listed = async (r: Replica, session: string) => (await manage(r, 'GET', `/v1/events/?session_id=${session}`)).json;
    expect(await listed(b, 'limit-00-a')).toMatchObject({ count: 1, results: [{ session_id: 'limit-00-a', response_status: 200 }] });
    expect(await listed(a, 'limit-11-b')).toMatchObject({ count: 1, results: [{ session_id: 'limit-11-b', response_status: 429 }] });
  });

  it('(d) SIGTERM to a replica with requests in flight: each completes, every event is stored before it exits, the other replica serves on', async () => {
    upstream.jsonDelayMs = 3000; // chat completions held at the upstream while B is told to stop
    upstream.chunkDelayMs = 500; // and streams mid-answer (7 events)
    let settled = 0;
    const chat = (session: string, stream: boolean) =>
      fetch(`${b.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json', 'x-agent-session-id': session },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${session}` }], stream }),
      }).then(async (res) => {
        const answer = { session, status: res.status, body: await res.text() };
        settled += 1;
        return answer;
      });

    const receivedBefore = upstream.received.length;
    const inFlight = [
      ...Array.from({ length: 12 }, (_, i) => chat(`stop-json-${String(i).padStart(2, '0')}`, false)),
      ...Array.from({ length: 3 }, (_, i) => chat(`stop-stream-${i}`, true)),
    ];
    // Meanwhile A keeps taking traffic, before, during and after B's shutdown.
    const onA = keepSending(a);
    let answers: Awaited<(typeof inFlight)[number]>[];
    let quick: Awaited<ReturnType<typeof detect>>[];
    try {
      // Every request reached the upstream: B accepted, authenticated, scanned and forwarded all of them.
      await until(async () => (upstream.received.length - receivedBefore >= inFlight.length ? true : undefined), 20_000);
      // And some quick requests B answers right before the signal: their events wait in its writer's buffer.
      quick = await Promise.all(Array.from({ length: 8 }, (_, i) => detect(b, 'hello', { session: `stop-quick-${i}` })));
      b.proc.child.kill('SIGTERM');
      expect(settled).toBe(0); // the premise: all of them were still in flight at the signal
      answers = await Promise.all(inFlight);
      expect(await b.proc.exited).toBe(0);
    } finally {
      await onA.stop();
    }
    for (const answer of answers) {
      expect({ session: answer.session, status: answer.status, body: answer.status === 200 ? '' : answer.body }).toEqual({ session: answer.session, status: 200, body: '' });
      if (answer.session.startsWith('stop-stream')) expect(answer.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      else expect(JSON.parse(answer.body).choices[0].message.content).toBe('Hello from the fake upstream.');
    }
    expect(quick.map((r) => r.status)).toEqual(Array(8).fill(200));

    // B has exited: what it wrote is there now, nothing is left in a spool (no polling).
    const expected = [...answers.map((r) => r.session), ...quick.map((_, i) => `stop-quick-${i}`)].sort();
    const fromB = (await storedEvents('stop-')).filter((r) => !r.session_id.startsWith('stop-other-'));
    expect(fromB.map((r) => r.session_id)).toEqual(expected);
    expect(fromB.every((r) => r.response_status === 200)).toBe(true);
    expect(b.proc.stdout() + b.proc.stderr()).not.toMatch(/spooled|could not be written|shutdown step failed/);
    const spool = join(b.dataDir, 'audit-spool');
    expect(existsSync(spool) ? readdirSync(spool).filter((f) => f.endsWith('.jsonl')) : []).toEqual([]);

    // A never noticed: all its requests were answered, and their events land too.
    expect(onA.sent.length).toBeGreaterThan(0);
    expect(onA.sent.filter((r) => r.status !== 200)).toEqual([]);
    expect((await detect(a, 'hello')).status).toBe(200);
    await expect(fetch(`${b.url}/health`)).rejects.toThrow();
    const fromA = await until(async () => {
      const rows = (await storedEvents('stop-other-')).map((r) => r.session_id);
      return rows.length >= onA.sent.length ? rows : undefined;
    }, 10_000);
    expect(fromA).toEqual(onA.sent.map((r) => r.session).sort());
  }, 60_000);
});
