import OpenAI from 'openai';
import { startFakeResponses, type FakeResponses } from '../fakes/fake-responses';
import { pgliteTarget } from '../helpers/databases';
import { newOrganization, restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * Stored responses belong to the organization that created them (docs/endpoints.md, Responses): every
 * tenant's responses live in the gateway's one provider account, so the gateway records the creator of
 * each (JSON answer or stream) and answers any other organization 404 for reads, input items, deletes and
 * previous_response_id, exactly as for an id that exists nowhere, without asking the provider.
 */

type ApiError = InstanceType<typeof OpenAI.APIError>;
const refusal = (p: Promise<unknown>) => p.then(() => { throw new Error('not refused'); }, (err: unknown) => err as ApiError);

describe('/v1/responses ownership across organizations (official openai SDK)', () => {
  let upstream: FakeResponses;
  let svc: TestServices;
  /** Organization A: its first project, and a second project of the same organization. */
  let a: OpenAI;
  let a2: OpenAI;
  let aOrg: string;
  let aProject: string;
  let aPolicy: string;
  /** Organization B. */
  let b: OpenAI;
  let bKey: string;
  const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
  const ownerOf = async (id: string) =>
    (await svc.running.storage!.query<{ organization_id: string; project_id: string }>('SELECT organization_id, project_id FROM response_owners WHERE response_id = $1', [id]))[0];

  beforeAll(async () => {
    upstream = await startFakeResponses();
    svc = await startTestServices(pgliteTarget, { env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream-owners-0001' } });
    const rest = restClient(svc.gatewayUrl, svc.apiKey);
    const first = (await rest.get('/v1/projects/')).json.results[0];
    aProject = first.id;
    aPolicy = first.policy_id;
    const second = await rest.post('/v1/projects/', { name: 'second', key_scope: 'traffic' });
    expect(second.status).toBe(201);
    const org = await newOrganization(svc, 'Tenant B');
    bKey = org.rawKey;
    [a, a2, b] = [sdk(svc.apiKey), sdk(second.json.raw_key), sdk(bKey)];
    aOrg = (await svc.running.storage!.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = $1', [aProject]))[0]!.organization_id;
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });

  it('another organization gets 404 for read, input items, delete and previous_response_id, as for an unknown id, and the provider is never asked', async () => {
    const created = await a.responses.create({ model: 'gpt-4.1-mini', input: 'Say hello' });
    expect(await ownerOf(created.id)).toEqual({ organization_id: aOrg, project_id: aProject });

    upstream.received.length = 0;
    const unknown = await refusal(b.responses.retrieve('resp_never_created'));
    const attempts: Array<[string, () => Promise<unknown>]> = [
      ['retrieve', () => b.responses.retrieve(created.id)],
      ['input items', () => b.responses.inputItems.list(created.id)],
      ['delete', () => b.responses.delete(created.id)],
      ['previous_response_id', () => b.responses.create({ model: 'gpt-4.1-mini', input: 'And then?', previous_response_id: created.id })],
    ];
    for (const [what, attempt] of attempts) {
      const err = await refusal(attempt());
      expect([what, err.status, err.error]).toEqual([what, 404, { type: 'not_found', code: 'not_found', message: expect.any(String) }]);
      expect((err.error as Json).message).not.toContain('another');
    }
    // The same answer as for an id that exists nowhere (only the id it names differs).
    const retrieved = await refusal(b.responses.retrieve(created.id));
    expect((retrieved.error as Json).message.replace(created.id, 'X')).toBe((unknown.error as Json).message.replace('resp_never_created', 'X'));
    expect(upstream.received).toEqual([]);
    expect(upstream.stored.has(created.id)).toBe(true);

    // The owner's organization, from another of its projects: reads it and continues it.
    expect((await a2.responses.retrieve(created.id)).id).toBe(created.id);
    expect((await a2.responses.inputItems.list(created.id)).data).toHaveLength(1);
    const next = await a2.responses.create({ model: 'gpt-4.1-mini', input: 'And then?', previous_response_id: created.id });
    expect(JSON.parse(upstream.received.at(-1)!.body)).toMatchObject({ previous_response_id: created.id });
    expect((await ownerOf(next.id))?.organization_id).toBe(aOrg);
    // B's own responses are B's: A cannot continue them.
    const theirs = await b.responses.create({ model: 'gpt-4.1-mini', input: 'Mine' });
    expect((await refusal(a.responses.create({ model: 'gpt-4.1-mini', input: 'x', previous_response_id: theirs.id }))).status).toBe(404);
    expect((await b.responses.retrieve(theirs.id)).id).toBe(theirs.id);

    // The owner deletes it: the provider is asked, then the record is gone (404 without asking again).
    await a.responses.delete(created.id);
    expect(upstream.stored.has(created.id)).toBe(false);
    expect(await ownerOf(created.id)).toBeUndefined();
    const calls = upstream.received.length;
    expect((await refusal(a.responses.retrieve(created.id))).status).toBe(404);
    expect(upstream.received).toHaveLength(calls);
  });

  it('a streamed response is recorded before its id reaches the client, scanned or not; store: false is not; conversation refused', async () => {
    for (const mode of ['IO', 'I']) {
      expect((await restClient(svc.gatewayUrl, svc.apiKey).patch(`/v1/policies/${aPolicy}/`, { policy_mode: mode })).status).toBe(200);
      // Read as soon as the SDK yields response.created, while the stream is still open.
      const stream = await a.responses.create({ model: 'gpt-4.1-mini', input: 'Stream it', stream: true });
      let id = '';
      for await (const event of stream) {
        if (event.type !== 'response.created') continue;
        id = event.response.id;
        expect(await ownerOf(id)).toEqual({ organization_id: aOrg, project_id: aProject });
      }
      expect((await a2.responses.retrieve(id)).output_text).toBe('Hello from Responses.');
      expect((await refusal(b.responses.retrieve(id))).status).toBe(404);
      // A JSON answer on the same policy.
      const json = await a.responses.create({ model: 'gpt-4.1-mini', input: 'Say hello' });
      expect((await a.responses.retrieve(json.id)).id).toBe(json.id);
    }

    const unstored = await a.responses.create({ model: 'gpt-4.1-mini', input: 'Forget me', store: false });
    expect(await ownerOf(unstored.id)).toBeUndefined();

    upstream.received.length = 0;
    const conversation = await postJson(`${svc.gatewayUrl}/v1/responses`, { model: 'gpt-4.1-mini', input: 'Hi', conversation: 'conv_123' }, { authorization: `Bearer ${bKey}` });
    expect(conversation.status).toBe(400);
    expect(conversation.json.error).toMatchObject({ type: 'invalid_request', code: 'conversation_not_supported' });
    expect(upstream.received).toEqual([]);
  });
});
