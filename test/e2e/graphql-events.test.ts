import { generateApiKey } from '../../src/shared/api-key';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { STORAGE_TARGETS } from '../helpers/databases';
import { gqlClient, gqlRequest, newOrganization, restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * The GraphQL `events` and `sessions` queries on real traffic: events are produced by real requests
 * through the sensor (fake upstream) and /v1/detect, then queried through GraphQL and REST; both
 * must answer exactly the same for the same filters (same service method, same zod schema).
 */

const EVENT_FIELDS = 'id project_id path session_id model input_tokens findings { type confidence action matches { path start end signal score } } blocked decision response_status latency_ms fail_reason unscanned_content request_id provider upstream_attempts { provider model status error duration_ms } created_at';
const SESSION_FIELDS = 'session_id count blocked_count first_seen last_seen models';

const EVENTS_Q = `query($limit: Int, $offset: Int, $path: String, $session_id: String, $project_id: ID, $blocked: Boolean, $decision: Decision, $detector: String, $since: String, $until: String) {
  events(limit: $limit, offset: $offset, path: $path, session_id: $session_id, project_id: $project_id, blocked: $blocked, decision: $decision, detector: $detector, since: $since, until: $until) {
    count results { ${EVENT_FIELDS} } } }`;
const SESSIONS_Q = `query($limit: Int, $offset: Int, $project_id: ID, $since: String, $until: String) {
  sessions(limit: $limit, offset: $offset, project_id: $project_id, since: $since, until: $until) { count results { ${SESSION_FIELDS} } } }`;

const STATS_Q = `query($project_id: ID, $detector: String, $bucket_seconds: Int) {
  event_stats(project_id: $project_id, detector: $detector, bucket_seconds: $bucket_seconds) {
    bucket_seconds totals { total blocked flagged allowed } buckets { start total blocked flagged allowed } top_detectors { type count blocked } } }`;
const DETECT_Q = `query($policy_id: ID!, $content: String!, $direction: Direction) {
  detect(policy_id: $policy_id, content: $content, direction: $direction) {
    blocked unscanned categories { type confidence action matches { path start end signal score } } policy { id } } }`;

const REST_EVENT_KEYS = ['blocked', 'created_at', 'decision', 'fail_reason', 'findings', 'id', 'input_tokens', 'latency_ms', 'model', 'path', 'project_id', 'provider', 'request_id', 'response_status', 'session_id', 'unscanned_content', 'upstream_attempts'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const queryString = (args: Record<string, unknown>) =>
  Object.entries(args)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');

/** The default policy with signature rules only (deny list, e-mail logging): verdicts never depend on classifier backends. */
async function signatureRulesOnly(rest: ReturnType<typeof restClient>): Promise<void> {
  const policy = (await rest.get('/v1/policies/?is_default=true')).json.results[0];
  const patch = {
    input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
    output_detectors: [],
    deny_list: { entries: ['forbidden'], match_type: 'contains' },
  };
  expect((await rest.patch(`/v1/policies/${policy.id}/`, patch)).status).toBe(200);
}

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('GraphQL audit events on %s', (_name, target) => {
  let upstream: FakeAnthropic;
  let svc: TestServices;
  let gql: ReturnType<typeof gqlClient>;
  let rest: ReturnType<typeof restClient>;
  let firstProject: string;
  let secondProject: string;
  /** A timestamp between the first and the second batch of requests. */
  let mid: string;
  let other: { rawKey: string; projectId: string };

  const sensor = (key: string, session: string, model: string, content: string) =>
    postJson(
      `${svc.sensorUrl}/v1/messages`,
      { model, max_tokens: 64, messages: [{ role: 'user', content }] },
      { 'x-svc-key': key, 'x-agent-session-id': session, 'anthropic-version': '2023-06-01', authorization: 'Bearer upstream-token' },
    );
  const events = async (args: Record<string, unknown> = {}) => (await gql.data(EVENTS_Q, args)).events as Json;
  const sessions = async (args: Record<string, unknown> = {}) => (await gql.data(SESSIONS_Q, args)).sessions as Json;

  beforeAll(async () => {
    upstream = await startFakeAnthropic();
    svc = await startTestServices(target, { env: { ANTHROPIC_BASE_URL: upstream.url } });
    gql = gqlClient(svc.gatewayUrl, svc.apiKey);
    rest = restClient(svc.gatewayUrl, svc.apiKey);
    await signatureRulesOnly(rest);
    firstProject = (await rest.get('/v1/projects/')).json.results[0].id;
    const second = await rest.post('/v1/projects/', { name: 'second', environment: 'development' });
    expect(second.status).toBe(201);
    secondProject = second.json.id;
    const otherOrg = await newOrganization(svc, 'gql-events-other');
    other = { rawKey: otherOrg.rawKey, projectId: otherOrg.projectId };
    await signatureRulesOnly(restClient(svc.gatewayUrl, other.rawKey));

    // Batch 1.
    expect((await sensor(svc.apiKey, 'session-a', 'model-1', 'one')).status).toBe(200);
    await sleep(5);
    expect((await sensor(svc.apiKey, 'session-a', 'model-2', 'a forbidden word')).status).toBe(403);
    await sleep(5);
    expect((await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello', direction: 'input' }, { authorization: `Bearer ${svc.apiKey}` })).status).toBe(200);
    await sleep(20);
    mid = new Date().toISOString();
    await sleep(20);
    // Batch 2.
    expect((await sensor(svc.apiKey, 'session-b', 'model-1', 'two')).status).toBe(200);
    await sleep(5);
    expect((await sensor(svc.apiKey, 'session-a', 'model-3', 'three')).status).toBe(200);
    await sleep(5);
    expect((await sensor(second.json.raw_key, 'session-c', 'model-2', 'four')).status).toBe(200);
    await sleep(5);
    // Unattributed (failed authentication) and another organization's traffic: never visible here.
    expect((await sensor(generateApiKey(), 'session-a', 'model-1', 'x')).status).toBe(401);
    expect((await sensor(other.rawKey, 'session-a', 'model-9', 'other org')).status).toBe(200);
    await svc.running.audit!.flush();
  }, 60000);
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });

  describe('events', () => {
    it('lists the organization events newest first with every REST field', async () => {
      const page = await events();
      expect(page.count).toBe(6);
      expect(page.results.map((e: Json) => [e.session_id, e.model, e.response_status])).toEqual([
        ['session-c', 'model-2', 200],
        ['session-a', 'model-3', 200],
        ['session-b', 'model-1', 200],
        [null, null, 200],
        ['session-a', 'model-2', 403],
        ['session-a', 'model-1', 200],
      ]);
      for (const e of page.results) expect(Object.keys(e).sort()).toEqual(REST_EVENT_KEYS);
      const blocked = page.results[4];
      expect(blocked).toMatchObject({
        project_id: firstProject,
        path: '/v1/messages',
        blocked: true,
        findings: [
          {
            type: 'deny_list',
            confidence: 1,
            action: 'block',
            // 'a forbidden word': the match is characters 2..11 of the only message's content.
            matches: [{ path: 'messages[0].content', start: 2, end: 11, signal: 'deny_list', score: 1 }],
          },
        ],
      });
      expect(blocked.input_tokens).toBeGreaterThan(0);
      expect(blocked.latency_ms).toBeGreaterThan(0);
      expect(new Date(blocked.created_at).toISOString()).toBe(blocked.created_at);
      expect(page.results[3]).toMatchObject({ path: '/v1/detect', session_id: null, blocked: false });
      expect(page.results[0].project_id).toBe(secondProject);
    });

    it.each([
      ['path', { path: '/v1/detect' }, 1],
      ['path (sensor)', { path: '/v1/messages' }, 5],
      ['session_id', { session_id: 'session-a' }, 3],
      ['an unknown session_id', { session_id: 'session-z' }, 0],
      ['project_id', { project_id: 'FIRST' }, 5],
      ['project_id (second project)', { project_id: 'SECOND' }, 1],
      ['blocked true', { blocked: true }, 1],
      ['blocked false', { blocked: false }, 5],
      ['since', { since: 'MID' }, 3],
      ['until', { until: 'MID' }, 3],
      ['combined', { session_id: 'session-a', since: 'MID', blocked: false }, 1],
    ])('filters by %s', async (_label, filter, expected) => {
      const args = resolve(filter);
      const page = await events(args);
      expect(page.count).toBe(expected);
      expect(page.results).toHaveLength(expected);
      if (args.session_id) for (const e of page.results) expect(e.session_id).toBe(args.session_id);
      if (args.blocked !== undefined) for (const e of page.results) expect(e.blocked).toBe(args.blocked);
      if (args.since) for (const e of page.results) expect(Date.parse(e.created_at)).toBeGreaterThanOrEqual(Date.parse(mid));
      if (args.until) for (const e of page.results) expect(Date.parse(e.created_at)).toBeLessThan(Date.parse(mid));
    });

    it('pages with limit and offset (count is the total before paging)', async () => {
      const all = (await events()).results.map((e: Json) => e.id);
      const pages = [await events({ limit: 4 }), await events({ limit: 4, offset: 4 }), await events({ limit: 4, offset: 8 })];
      expect(pages.map((p) => p.count)).toEqual([6, 6, 6]);
      expect(pages.flatMap((p) => p.results.map((e: Json) => e.id))).toEqual(all);
      expect((await events({ limit: 2, offset: 1 })).results.map((e: Json) => e.id)).toEqual(all.slice(1, 3));
    });

    it.each([
      ['a since that is not a timestamp', { since: 'yesterday' }, 'since'],
      ['an until without an offset', { until: '2026-01-01T00:00:00' }, 'until'],
      ['a project_id that is not a UUID', { project_id: 'p-1' }, 'project_id'],
      ['a limit over 100', { limit: 101 }, 'limit'],
      ['a negative offset', { offset: -1 }, 'offset'],
    ])('rejects %s as invalid_request naming the argument, as REST answers 400', async (_label, args, path) => {
      const err = await gql.error(EVENTS_Q, args);
      expect(err.extensions).toMatchObject({ code: 'invalid_request', error_code: 'invalid_request', fields: [{ path, message: expect.any(String) }] });
      const res = await rest.get(`/v1/events/?${queryString(args)}`);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ type: 'invalid_request' });
      expect(res.json.error.message).toContain(path);
    });
  });

  describe('sessions', () => {
    it('groups the events by session_id, most recently active first', async () => {
      const page = await sessions();
      expect(page.count).toBe(3);
      expect(page.results.map((s: Json) => s.session_id)).toEqual(['session-c', 'session-a', 'session-b']);
      const a = page.results[1];
      expect(a).toMatchObject({ count: 3, blocked_count: 1, models: ['model-1', 'model-2', 'model-3'] });
      const aEvents = (await events({ session_id: 'session-a' })).results;
      expect(a.last_seen).toBe(aEvents[0].created_at);
      expect(a.first_seen).toBe(aEvents[2].created_at);
      expect(page.results[0]).toMatchObject({ count: 1, blocked_count: 0, models: ['model-2'] });
      expect(page.results[2]).toMatchObject({ count: 1, blocked_count: 0, models: ['model-1'] });
      for (const s of page.results) expect(Object.keys(s).sort()).toEqual(['blocked_count', 'count', 'first_seen', 'last_seen', 'models', 'session_id']);
    });

    it('filters the events before grouping (project, time range) and pages', async () => {
      expect((await sessions({ project_id: secondProject })).results).toEqual([expect.objectContaining({ session_id: 'session-c', count: 1 })]);
      const first = await sessions({ project_id: firstProject });
      expect(first.results.map((s: Json) => s.session_id)).toEqual(['session-a', 'session-b']);
      const before = await sessions({ until: mid });
      expect(before.results).toEqual([expect.objectContaining({ session_id: 'session-a', count: 2, blocked_count: 1, models: ['model-1', 'model-2'] })]);
      const after = await sessions({ since: mid });
      expect(after.results.find((s: Json) => s.session_id === 'session-a')).toMatchObject({ count: 1, blocked_count: 0, models: ['model-3'] });
      expect(after.count).toBe(3);
      const paged = await sessions({ limit: 1, offset: 1 });
      expect(paged).toEqual({ count: 3, results: [expect.objectContaining({ session_id: 'session-a' })] });
      const err = await gql.error(SESSIONS_Q, { since: 'not-a-date' });
      expect(err.extensions).toMatchObject({ code: 'invalid_request', fields: [{ path: 'since', message: expect.any(String) }] });
    });
  });

  describe('REST / GraphQL parity', () => {
    const eventFilters: Array<Record<string, unknown>> = [
      {},
      { limit: 2, offset: 1 },
      { path: '/v1/messages' },
      { session_id: 'session-a' },
      { project_id: 'FIRST' },
      { blocked: true },
      { since: 'MID' },
      { until: 'MID', path: '/v1/messages' },
      { session_id: 'none' },
    ];
    it.each(eventFilters.map((f) => [JSON.stringify(f), f] as const))('events %s', async (_label, filter) => {
      const args = resolve(filter);
      const viaRest = await rest.get(`/v1/events/?${queryString(args)}`);
      expect(viaRest.status).toBe(200);
      expect(await events(args)).toEqual(viaRest.json);
    });

    const sessionFilters: Array<Record<string, unknown>> = [{}, { limit: 1 }, { limit: 2, offset: 1 }, { project_id: 'FIRST' }, { since: 'MID' }, { until: 'MID' }];
    it.each(sessionFilters.map((f) => [JSON.stringify(f), f] as const))('sessions %s', async (_label, filter) => {
      const args = resolve(filter);
      const viaRest = await rest.get(`/v1/events/sessions/?${queryString(args)}`);
      expect(viaRest.status).toBe(200);
      expect(await sessions(args)).toEqual(viaRest.json);
    });
  });

  describe('tenancy', () => {
    it('another organization sees only its own events and sessions', async () => {
      const them = gqlClient(svc.gatewayUrl, other.rawKey);
      const theirEvents = (await them.data(EVENTS_Q)).events;
      expect(theirEvents.count).toBe(1);
      expect(theirEvents.results[0]).toMatchObject({ project_id: other.projectId, session_id: 'session-a', model: 'model-9' });
      // The same session id in two organizations is two sessions: each sees only its own events.
      expect((await them.data(SESSIONS_Q)).sessions).toEqual({
        count: 1,
        results: [expect.objectContaining({ session_id: 'session-a', count: 1, blocked_count: 0, models: ['model-9'] })],
      });
      // Our ids as filters find nothing there.
      expect((await them.data(EVENTS_Q, { project_id: firstProject })).events).toEqual({ count: 0, results: [] });
      expect((await them.data(SESSIONS_Q, { project_id: firstProject })).sessions).toEqual({ count: 0, results: [] });
      // And theirs find nothing here.
      expect(await events({ project_id: other.projectId })).toEqual({ count: 0, results: [] });
      expect((await events({ session_id: 'session-a' })).results.map((e: Json) => e.model)).not.toContain('model-9');
    });

    it('requires the bearer key', async () => {
      const res = await gqlRequest(svc.gatewayUrl, null, '{ events { count } }');
      expect(res.status).toBe(401);
      expect(res.json.error).toMatchObject({ type: 'authentication_error' });
    });
  });

  // Last: it adds a flagged event (the tables above count the traffic of beforeAll).
  describe('decision and detector filters, event_stats, detect (the console queries)', () => {
    let defaultPolicy: string;
    const FLAGGED_TEXT = 'mail jane.doe@acme-corp.com please';

    beforeAll(async () => {
      defaultPolicy = (await rest.get('/v1/policies/?is_default=true')).json.results[0].id;
      // pii/email with the log action: fires without blocking (flagged).
      expect((await postJson(`${svc.gatewayUrl}/v1/detect`, { content: FLAGGED_TEXT }, { authorization: `Bearer ${svc.apiKey}` })).status).toBe(200);
      await svc.running.audit!.flush();
    });

    it.each([
      [{ decision: 'blocked' }, 1, ['deny_list']],
      [{ decision: 'flagged' }, 1, ['pii/email']],
      [{ decision: 'allowed' }, 5, []],
      [{ detector: 'deny_list' }, 1, ['deny_list']],
      [{ detector: 'pii/email' }, 1, ['pii/email']],
      [{ detector: 'pii/phone_number' }, 0, []],
      [{ decision: 'allowed', session_id: 'session-a' }, 2, []],
    ] as Array<[Record<string, string>, number, string[]]>)('events %j (REST the same)', async (filter, expected, types) => {
      const page = await events(filter);
      expect(page.count).toBe(expected);
      for (const e of page.results) {
        expect(e.findings.map((f: Json) => f.type)).toEqual(types);
        if (filter.decision) expect(e.decision).toBe(filter.decision);
      }
      expect((await rest.get(`/v1/events/?${queryString(filter)}`)).json).toEqual(page);
    });

    it('rejects an unknown decision and an empty detector (REST 400, GraphQL invalid_request)', async () => {
      const bad = await rest.get('/v1/events/?decision=maybe');
      expect(bad.status).toBe(400);
      expect(bad.json.error.message).toContain('decision');
      expect((await rest.get('/v1/events/?detector=')).status).toBe(400);
      expect((await gql.error(EVENTS_Q, { detector: '' })).extensions).toMatchObject({ code: 'invalid_request', fields: [{ path: 'detector' }] });
    });

    it('event_stats counts by decision over time buckets and ranks the detectors', async () => {
      const stats = (await gql.data(STATS_Q, { bucket_seconds: 60 })).event_stats;
      expect(stats.bucket_seconds).toBe(60);
      expect(stats.totals).toEqual({ total: 7, blocked: 1, flagged: 1, allowed: 5 });
      const sum = (k: string) => stats.buckets.reduce((n: number, b: Json) => n + b[k], 0);
      expect({ total: sum('total'), blocked: sum('blocked'), flagged: sum('flagged'), allowed: sum('allowed') }).toEqual(stats.totals);
      for (const b of stats.buckets) expect(Date.parse(b.start) % 60_000).toBe(0);
      expect(stats.buckets.map((b: Json) => b.start)).toEqual([...stats.buckets.map((b: Json) => b.start)].sort());
      expect(stats.top_detectors).toEqual(
        expect.arrayContaining([
          { type: 'deny_list', count: 1, blocked: 1 },
          { type: 'pii/email', count: 1, blocked: 0 },
        ]),
      );
      expect(stats.top_detectors).toHaveLength(2);
      // The events filters apply.
      const second = (await gql.data(STATS_Q, { project_id: secondProject })).event_stats;
      expect(second).toMatchObject({ bucket_seconds: 3600, totals: { total: 1, blocked: 0, flagged: 0, allowed: 1 }, top_detectors: [] });
      expect((await gql.data(STATS_Q, { detector: 'pii/email' })).event_stats.totals).toEqual({ total: 1, blocked: 0, flagged: 1, allowed: 0 });
      expect((await gql.error(STATS_Q, { bucket_seconds: 1 })).extensions).toMatchObject({ code: 'invalid_request', fields: [{ path: 'bucket_seconds' }] });
    });

    it('detect scans a text with a chosen policy, with spans, and records no event', async () => {
      const flagged = (await gql.data(DETECT_Q, { policy_id: defaultPolicy, content: FLAGGED_TEXT })).detect;
      const start = FLAGGED_TEXT.indexOf('jane');
      expect(flagged).toEqual({
        blocked: false,
        unscanned: [],
        policy: { id: defaultPolicy },
        categories: [
          {
            type: 'pii/email',
            confidence: expect.any(Number),
            action: 'log',
            matches: [{ path: 'content', start, end: start + 'jane.doe@acme-corp.com'.length, signal: expect.any(String), score: expect.any(Number) }],
          },
        ],
      });
      // The same verdict as POST /v1/detect with the project (whose policy this is).
      const viaRest = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: FLAGGED_TEXT }, { authorization: `Bearer ${svc.apiKey}` });
      expect(viaRest.json).toEqual({ blocked: flagged.blocked, unscanned: flagged.unscanned, categories: flagged.categories });
      const blocked = (await gql.data(DETECT_Q, { policy_id: defaultPolicy, content: 'a forbidden word', direction: 'output' })).detect;
      expect(blocked).toMatchObject({ blocked: true, categories: [{ type: 'deny_list', action: 'block', matches: [{ path: 'content', start: 2, end: 11 }] }] });
      await svc.running.audit!.flush();
      // 7 + the REST call above; the two GraphQL detections are not traffic.
      expect((await events()).count).toBe(8);
    });

    it('detect refuses another organization\'s policy and bad arguments', async () => {
      const theirs = (await restClient(svc.gatewayUrl, other.rawKey).get('/v1/policies/?is_default=true')).json.results[0].id;
      expect((await gql.error(DETECT_Q, { policy_id: theirs, content: 'x' })).extensions).toMatchObject({ code: 'not_found' });
      expect((await gql.error(DETECT_Q, { policy_id: 'p-1', content: 'x' })).extensions).toMatchObject({ code: 'invalid_request', fields: [{ path: 'policy_id' }] });
    });
  });

  /** Placeholders of the tables (values known only once the data exists). */
  function resolve(filter: Record<string, unknown>): Record<string, unknown> {
    const map: Record<string, unknown> = { MID: mid, FIRST: firstProject, SECOND: secondProject };
    return Object.fromEntries(Object.entries(filter).map(([k, v]) => [k, typeof v === 'string' && v in map ? map[v] : v]));
  }
});
