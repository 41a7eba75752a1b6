import { useCoverageEnv } from './harness';
import { CHAT_WIRE, MESSAGES_WIRE, requestSuite, RESPONSES_WIRE } from './request.suite';
import { CHAT_OUT, MESSAGES_OUT, responseSuite, RESPONSES_OUT } from './response.suite';

/**
 * Scan coverage (issue 16): every content field of the three wire APIs (chat completions, messages, Responses) × every smuggling variant, against
 * one gateway + sensor + detection (real HTTP and gRPC; fake upstreams speaking the wire formats).
 * The table: chat-fields.ts / messages-fields.ts (fields), payloads.ts (variants), sse-framing.ts
 * (stream framings), table.ts (the cross product and its default sample). Completeness of the table
 * against the extractors: table-completeness.test.ts.
 */
describe('scan coverage', () => {
  const env = useCoverageEnv();
  requestSuite(env, CHAT_WIRE);
  responseSuite(env, CHAT_OUT);
  requestSuite(env, MESSAGES_WIRE);
  responseSuite(env, MESSAGES_OUT);
  requestSuite(env, RESPONSES_WIRE);
  responseSuite(env, RESPONSES_OUT);
});
