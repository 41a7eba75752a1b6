import Ajv2020 from 'ajv/dist/2020';
import { readChatRequest } from '../../../src/gateway/proxy/openai-chat.schema';
import { readResponsesRequest } from '../../../src/gateway/proxy/openai-responses.schema';
import { responsesRequestDocSchema } from '../../../src/gateway/routes/responses.routes';
import { chatRequestDocSchema } from '../../../src/gateway/routes/chat-completions.routes';
import { jsonSchemaOf } from '../../../src/shared/http/openapi';
import { readMessagesRequest } from '../../../src/sensor/messages.schema';
import { messagesRequestDocSchema } from '../../../src/sensor/messages.routes';

/**
 * The proxy routes validate with hand-written readers (they pass every other field through untouched);
 * the OpenAPI document shows their request as a zod schema. Both must accept and refuse the same bodies.
 */
const ajv = new Ajv2020({ strict: false, validateFormats: false });
const accepts = (read: (b: unknown) => unknown, body: unknown) => {
  try {
    read(body);
    return true;
  } catch {
    return false;
  }
};

describe('documented proxy request schemas agree with the request readers', () => {
  it('chat completions', () => {
    const documented = ajv.compile(jsonSchemaOf(chatRequestDocSchema, 'input'));
    const samples: unknown[] = [
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
      { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true, temperature: 0.2, tools: [] },
      { model: 'gpt-4o', messages: [{ role: 'assistant', tool_calls: [] }] },
      { model: '', messages: [{ role: 'user', content: 'hi' }] },
      { messages: [{ role: 'user', content: 'hi' }] },
      { model: 7, messages: [{ role: 'user', content: 'hi' }] },
      { model: 'gpt-4o', messages: [] },
      { model: 'gpt-4o' },
      { model: 'gpt-4o', messages: [{ content: 'hi' }] },
      { model: 'gpt-4o', messages: ['hi'] },
      { model: 'gpt-4o', messages: 'hi' },
      [],
      'text',
    ];
    for (const body of samples) {
      const label = JSON.stringify(body);
      expect({ label, documented: documented(body) }).toEqual({ label, documented: accepts(readChatRequest, body) });
      expect({ label, zod: chatRequestDocSchema.safeParse(body).success }).toEqual({ label, zod: accepts(readChatRequest, body) });
    }
  });

  it('responses', () => {
    const documented = ajv.compile(jsonSchemaOf(responsesRequestDocSchema, 'input'));
    const samples: unknown[] = [
      { model: 'gpt-4.1', input: 'hi' },
      { model: 'gpt-4.1', input: [{ role: 'user', content: 'hi' }, 'more'], instructions: 'be brief', stream: true, background: false },
      { prompt: { id: 'pmpt_1', variables: { city: 'Paris' } } },
      { model: 'gpt-4.1', instructions: [{ role: 'developer', content: 'be brief' }] },
      { model: '', input: 'hi' },
      { model: 7, input: 'hi' },
      { model: 'gpt-4.1', input: 7 },
      { model: 'gpt-4.1', input: [7] },
      { model: 'gpt-4.1', input: 'hi', instructions: null },
      { model: 'gpt-4.1', input: 'hi', instructions: 7 },
      { model: 'gpt-4.1', input: 'hi', background: true },
      [],
      'text',
    ];
    for (const body of samples) {
      const label = JSON.stringify(body);
      expect({ label, documented: documented(body) }).toEqual({ label, documented: accepts(readResponsesRequest, body) });
      expect({ label, zod: responsesRequestDocSchema.safeParse(body).success }).toEqual({ label, zod: accepts(readResponsesRequest, body) });
    }
  });

  it('messages (sensor)', () => {
    const documented = ajv.compile(jsonSchemaOf(messagesRequestDocSchema, 'input'));
    const samples: unknown[] = [
      { model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { model: 'claude', system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true },
      { messages: [] },
      { model: 'claude', messages: [{ role: 'user' }] },
      { model: 'claude', messages: ['hi'] },
      { model: 'claude', messages: 'hi' },
      { model: 'claude' },
      [],
    ];
    for (const body of samples) {
      const label = JSON.stringify(body);
      expect({ label, documented: documented(body) }).toEqual({ label, documented: accepts(readMessagesRequest, body) });
    }
    // Stated for the upstream, not checked by the sensor (it forwards; the upstream refuses): the document is stricter.
    const wrongModel = { model: 1, messages: [{ role: 'user', content: 'hi' }] };
    expect([documented(wrongModel), accepts(readMessagesRequest, wrongModel)]).toEqual([false, true]);
  });
});
