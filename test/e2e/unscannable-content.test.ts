import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { pgliteTarget } from '../helpers/databases';
import { gqlClient, restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import { until } from '../helpers/until';

/**
 * Content no detector can read (images, audio, PDFs, file references) and inline text files, through
 * the official clients: text files are decoded and scanned; the rest is refused under the policy's
 * unscannable mode `block` (the default when a detector blocks) or forwarded under `allow`, its JSON
 * paths in X-Risk-Unscanned-Content and in the audit event (REST and GraphQL). Scanning does not depend
 * on the database: the embedded one only.
 */

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const PDF = `data:application/pdf;base64,${b64('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj << >> endobj\n')}`;
const PNG = `data:image/png;base64,${b64(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))}`;


describe('unscannable content and inline files', () => {
  let openaiUpstream: FakeOpenAI;
  let anthropicUpstream: FakeAnthropic;
  let svc: TestServices;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let rest: ReturnType<typeof restClient>;
  let gql: ReturnType<typeof gqlClient>;
  let policyId: string;

  beforeAll(async () => {
    openaiUpstream = await startFakeOpenAI();
    anthropicUpstream = await startFakeAnthropic();
    svc = await startTestServices(pgliteTarget, { env: { OPENAI_BASE_URL: openaiUpstream.url, OPENAI_API_KEY: 'sk-up', ANTHROPIC_BASE_URL: anthropicUpstream.url } });
    openai = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'sk-ant-upstream', baseURL: svc.sensorUrl, maxRetries: 0, defaultHeaders: { 'x-svc-key': svc.apiKey } });
    rest = restClient(svc.gatewayUrl, svc.apiKey);
    gql = gqlClient(svc.gatewayUrl, svc.apiKey);
    policyId = (await rest.get('/v1/policies/?is_default=true')).json.results[0].id;
  });
  afterAll(async () => {
    await svc?.dispose();
    await openaiUpstream?.close();
    await anthropicUpstream?.close();
  });
  beforeEach(async () => {
    openaiUpstream.received.length = 0;
    anthropicUpstream.received.length = 0;
    // Signature detectors only (the outcome never depends on a classifier); e-mail blocks, so the default is block.
    const set = await rest.patch(`/v1/policies/${policyId}/`, {
      policy_mode: 'IO',
      input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
      output_detectors: [],
      deny_list: { entries: ['zebra-quartz-77'], match_type: 'contains' },
      unscannable: null,
    });
    expect(set.json).toMatchObject({ unscannable: null, effective_unscannable: 'block' });
  });

  /** A chat request, tagged with a session id when its audit event is read back. */
  const chatWith = (content: OpenAI.Chat.ChatCompletionContentPart[], session?: string) =>
    openai.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }, session ? { headers: { 'x-agent-session-id': session } } : {})
      .withResponse();
  const caught = <T>(p: Promise<T>) => p.then(() => { throw new Error('expected an error'); }, (e: unknown) => e);

  /** The audit event of the one request sent with session id `session`, once written (REST), and the same event through GraphQL. */
  async function eventOf(session: string): Promise<{ rest: Json; gql: Json }> {
    const restEvent = await until(async () => (await rest.get(`/v1/events/?session_id=${session}`)).json.results[0] as Json | undefined);
    const page = await gql.data('query($session: String) { events(session_id: $session) { results { id unscanned_content blocked response_status } } }', { session });
    return { rest: restEvent, gql: page.events.results[0] };
  }

  describe('text files are decoded and scanned', () => {
    it('blocks a text file part holding a deny-listed term or an e-mail address; nothing is forwarded', async () => {
      for (const text of ['Quarterly notes: zebra-quartz-77', 'Contact: jane.roe@acme-corp.com']) {
        const err = await caught(chatWith([{ type: 'file', file: { file_data: `data:text/plain;base64,${b64(text)}`, filename: 'notes.txt' } }]));
        expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
        expect((err as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({ code: 'input_blocked' });
      }
      expect(openaiUpstream.received).toHaveLength(0);
    });

    it('forwards a benign text file byte for byte', async () => {
      const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:text/markdown;base64,${b64('# Plan\n\nShip it on Friday.\n')}","filename":"plan.md"}},{"type":"text","text":"Summarise"}]}]}`;
      const res = await postJson(`${svc.gatewayUrl}/v1/chat/completions`, body, { authorization: `Bearer ${svc.apiKey}` });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-risk-unscanned-content')).toBeNull();
      expect(openaiUpstream.received).toHaveLength(1);
      expect(openaiUpstream.received[0]!.body.equals(Buffer.from(body))).toBe(true);
    });

    it('sensor: blocks a base64 text document with the term; forwards a benign one byte for byte', async () => {
      // The SDK types a base64 document as a PDF; the wire accepts any media type, and text is what is decoded.
      const doc = (text: string) => ({ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: b64(text) } }) as unknown as Anthropic.DocumentBlockParam;
      const err = await caught(anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: [doc('see zebra-quartz-77'), { type: 'text', text: 'Summarise' }] }] }));
      expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect(anthropicUpstream.received).toHaveLength(0);
      const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: [doc('Meeting at noon.'), { type: 'text', text: 'Summarise' }] }] });
      const res = await postJson(`${svc.sensorUrl}/v1/messages`, body, { 'x-svc-key': svc.apiKey, 'anthropic-version': '2023-06-01' });
      expect(res.status).toBe(200);
      expect(anthropicUpstream.received[0]!.body.equals(Buffer.from(body))).toBe(true);
    });

    it('refuses invalid base64 with 400 invalid_base64 (both APIs)', async () => {
      const chat = await postJson(
        `${svc.gatewayUrl}/v1/chat/completions`,
        { model: 'm', messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:text/plain;base64,@@not base64@@' } }] }] },
        { authorization: `Bearer ${svc.apiKey}` },
      );
      expect(chat.status).toBe(400);
      expect(chat.json.error).toMatchObject({ type: 'invalid_request', code: 'invalid_base64', message: expect.stringContaining('messages[0].content[0].file.file_data') });
      const sensor = await postJson(
        `${svc.sensorUrl}/v1/messages`,
        { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: '%%%' } }] }] },
        { 'x-svc-key': svc.apiKey },
      );
      expect(sensor.status).toBe(400);
      expect(sensor.json).toMatchObject({ type: 'error', error: { type: 'invalid_request', code: 'invalid_base64' } });
      expect(openaiUpstream.received.length + anthropicUpstream.received.length).toBe(0);
    });
  });

  describe('unscannable: block (the default when a detector blocks)', () => {
    it.each([
      ['an image by URL', { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }, 'messages[0].content[0].image_url'],
      ['an image data URL', { type: 'image_url', image_url: { url: PNG } }, 'messages[0].content[0].image_url'],
      ['a PDF file part', { type: 'file', file: { file_data: PDF, filename: 'report.pdf' } }, 'messages[0].content[0].file.file_data'],
      ['a file by id', { type: 'file', file: { file_id: 'file-abc123' } }, 'messages[0].content[0].file.file_id'],
      ['input audio', { type: 'input_audio', input_audio: { data: b64('RIFF....WAVE'), format: 'wav' } }, 'messages[0].content[0].input_audio'],
    ] as Array<[string, OpenAI.Chat.ChatCompletionContentPart, string]>)('chat completions: %s → 403 unscannable_content, nothing forwarded', async (_label, part, path) => {
      const err = await caught(chatWith([part, { type: 'text', text: 'What is this?' }]));
      expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
      const e = err as InstanceType<typeof OpenAI.PermissionDeniedError>;
      expect(e.error).toMatchObject({ type: 'security_block', code: 'unscannable_content', details: { unscanned_content: [path] } });
      expect(e.headers?.get('x-risk-blocked')).toBe('true');
      expect(e.headers?.get('x-risk-unscanned-content')).toBe(path);
      expect(openaiUpstream.received).toHaveLength(0);
    });

    it('sensor: an image block and a PDF document → 403 permission_error unscannable_content', async () => {
      const err = await caught(
        anthropic.messages.create({
          model: 'claude-sonnet-4-5',
          max_tokens: 16,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.split(',')[1]! } },
                { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF.split(',')[1]! } },
                { type: 'text', text: 'Describe' },
              ],
            },
          ],
        }),
      );
      expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
      const e = err as InstanceType<typeof Anthropic.PermissionDeniedError>;
      expect(e.status).toBe(403);
      expect(e.error).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'unscannable_content' } });
      expect(e.headers?.get('x-risk-unscanned-content')).toBe('messages[0].content[0].source,messages[0].content[1].source.data');
      expect(anthropicUpstream.received).toHaveLength(0);
    });

    it('a detector block wins over the unscannable block; the event lists the unscanned paths', async () => {
      const err = await caught(chatWith([{ type: 'image_url', image_url: { url: PNG } }, { type: 'text', text: 'mail jane.roe@acme-corp.com' }], 'unscannable-detector-wins'));
      expect((err as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({ code: 'input_blocked' });
      const { rest: event } = await eventOf('unscannable-detector-wins');
      expect(event).toMatchObject({ blocked: true, response_status: 403, unscanned_content: ['messages[0].content[0].image_url'] });
    });

    it('an explicit block applies even with no blocking detector; policy_mode O checks nothing', async () => {
      await rest.patch(`/v1/policies/${policyId}/`, { input_detectors: [], unscannable: 'block' });
      const err = await caught(chatWith([{ type: 'image_url', image_url: { url: PNG } }]));
      expect((err as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({ code: 'unscannable_content' });
      await rest.patch(`/v1/policies/${policyId}/`, { policy_mode: 'O' });
      const { response } = await chatWith([{ type: 'image_url', image_url: { url: PNG } }]);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-risk-unscanned-content')).toBeNull();
    });
  });

  describe('unscannable: allow', () => {
    beforeEach(async () => {
      const set = await rest.patch(`/v1/policies/${policyId}/`, { unscannable: 'allow' });
      expect(set.json).toMatchObject({ unscannable: 'allow', effective_unscannable: 'allow' });
    });

    it('chat completions: forwarded unchanged with X-Risk-Unscanned-Content; the event (REST and GraphQL) lists the paths', async () => {
      const { data, response } = await chatWith(
        [
          { type: 'text', text: 'Compare these' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'file', file: { file_data: PDF, filename: 'report.pdf' } },
        ],
        'unscannable-allow-chat',
      );
      expect(data.choices[0]!.message.content).toBe('Hello from the fake upstream.');
      expect(response.headers.get('x-risk-blocked')).toBe('false');
      const paths = ['messages[0].content[1].image_url', 'messages[0].content[2].file.file_data'];
      expect(response.headers.get('x-risk-unscanned-content')).toBe(paths.join(','));
      expect(JSON.parse(openaiUpstream.received[0]!.body.toString()).messages[0].content[2].file.file_data).toBe(PDF);
      const event = await eventOf('unscannable-allow-chat');
      expect(event.rest).toMatchObject({ blocked: false, response_status: 200, unscanned_content: paths });
      expect(event.gql).toEqual({ id: event.rest.id, unscanned_content: paths, blocked: false, response_status: 200 });
    });

    it('sensor: an image passes with the header, and its event says so', async () => {
      const { response } = await anthropic.messages
        .create({
          model: 'claude-sonnet-4-5',
          max_tokens: 16,
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } }, { type: 'text', text: 'Describe' }] }],
        }, { headers: { 'x-agent-session-id': 'unscannable-allow-sensor' } })
        .withResponse();
      expect(response.status).toBe(200);
      expect(response.headers.get('x-risk-unscanned-content')).toBe('messages[0].content[0].source');
      expect(anthropicUpstream.received).toHaveLength(1);
      const event = await eventOf('unscannable-allow-sensor');
      expect(event.rest.unscanned_content).toEqual(['messages[0].content[0].source']);
      expect(event.gql.unscanned_content).toEqual(['messages[0].content[0].source']);
    });

    it('bounds the header: whole paths within 2048 characters, then +N', async () => {
      const parts = Array.from({ length: 200 }, () => ({ type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } }));
      const { response } = await chatWith(parts);
      const header = response.headers.get('x-risk-unscanned-content')!;
      expect(header.length).toBeLessThanOrEqual(2048);
      const listed = header.split(',');
      const rest = listed.pop()!;
      expect(listed).toEqual(listed.map((_, i) => `messages[0].content[${i}].image_url`));
      expect(rest).toBe(`+${200 - listed.length}`);
    });
  });

  describe('management: the unscannable field', () => {
    it('REST: a bad value is a 400 envelope; set, read back and reset to automatic', async () => {
      for (const bad of ['maybe', 'BLOCK', 1, true]) {
        const res = await rest.patch(`/v1/policies/${policyId}/`, { unscannable: bad });
        expect(res.status).toBe(400);
        expect(res.json.error).toMatchObject({ type: 'invalid_request', code: 'invalid_request', message: expect.stringContaining('unscannable') });
      }
      const created = await rest.post('/v1/policies/', { name: 'unscannable allow', unscannable: 'allow' });
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({ unscannable: 'allow', effective_unscannable: 'allow' });
      const plain = await rest.post('/v1/policies/', { name: 'unscannable auto', output_detectors: [{ detector_type: 'pii/email', action: 'block' }] });
      expect(plain.json).toMatchObject({ unscannable: null, effective_unscannable: 'block' });
      const reset = await rest.patch(`/v1/policies/${created.json.id}/`, { unscannable: null });
      expect(reset.json).toMatchObject({ unscannable: null, effective_unscannable: 'allow' });
      expect((await rest.get(`/v1/policies/${created.json.id}/`)).json.unscannable).toBeNull();
    });

    it('GraphQL: the enum is validated; create and update set it', async () => {
      const bad = await gql.raw('mutation { updatePolicy(id: "' + policyId + '", input: { unscannable: maybe }) { id } }');
      expect(bad.json.errors[0].message).toContain('Unscannable');
      const made = await gql.data('mutation { createPolicy(input: { name: "gql unscannable", unscannable: block }) { id unscannable effective_unscannable } }');
      expect(made.createPolicy).toMatchObject({ unscannable: 'block', effective_unscannable: 'block' });
      const updated = await gql.data('mutation($id: ID!) { updatePolicy(id: $id, input: { unscannable: null }) { unscannable effective_unscannable } }', { id: made.createPolicy.id });
      expect(updated.updatePolicy).toEqual({ unscannable: null, effective_unscannable: 'allow' });
    });
  });
});
