import { startFakeSseUpstream, type FakeSseUpstream } from '../fakes/fake-sse-upstream';
import { pgliteTarget } from '../helpers/databases';
import { restClient } from '../helpers/management-clients';
import { startTestServices, type TestServices } from '../helpers/services';
import { ALLOWED, DIGITS, PHRASE } from './payloads';
import type { Json } from './table';

/**
 * One gateway + sensor + detection per test file (real HTTP, real gRPC hop; only the upstream is fake),
 * with the coverage policy: the deny list (cheap, catches most variants), the prompt_attack classifier
 * (the plain attack, the invisible-text signal) and the e-mail detector, all blocking, on input and
 * output; an allow list with one phrase. Scanning does not depend on the database: the embedded one.
 */
async function startCoverageServices(env: Record<string, string>): Promise<TestServices> {
  // The table asserts what is scanned, not how fast: a detection deadline of 10 s instead of 2 s, so the first
  // (cold) request of a CI machine under load does not fail closed (one CI run saw a control answered 503).
  const svc = await startTestServices(pgliteTarget, { env: { DETECTION_TIMEOUT_MS: '10000', ...env } });
  const rest = restClient(svc.gatewayUrl, svc.apiKey);
  const policyId = (await rest.get('/v1/policies/?is_default=true')).json.results[0].id;
  const detectors = [
    { detector_type: 'prompt_attack', threshold: 'L2', action: 'block' },
    { detector_type: 'pii/email', threshold: 'L2', action: 'block' },
  ];
  const patch = await rest.patch(`/v1/policies/${policyId}/`, {
    policy_mode: 'IO',
    input_detectors: detectors,
    output_detectors: detectors,
    deny_list: { entries: [PHRASE, DIGITS], match_type: 'contains' },
    allow_list: { entries: [ALLOWED], match_type: 'contains' },
    // Rows carry an image URL or a file id beside the scanned field: listed as unscanned, not refused.
    unscannable: 'allow',
  });
  if (patch.status !== 200) throw new Error(`policy update failed: ${JSON.stringify(patch.json)}`);
  return svc;
}

export interface CoverageEnv {
  svc: TestServices;
  /**
   * The upstream of both wires (chat completions and messages: it answers any path): scripted answers
   * per model, a plain JSON answer otherwise; it records every request body.
   */
  openai: FakeSseUpstream;
}

/**
 * Registers beforeAll / afterAll starting the coverage services and both fake upstreams once for the
 * file; the returned getter gives them to the suites (chat-request.suite.ts, ...).
 */
export function useCoverageEnv(): () => CoverageEnv {
  const env = {} as CoverageEnv;
  beforeAll(async () => {
    env.openai = await startFakeSseUpstream();
    env.openai.gapMs = 0;
    env.openai.fallback = {
      id: 'chatcmpl-coverage',
      object: 'chat.completion',
      created: 1_763_800_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    };
    env.svc = await startCoverageServices({ OPENAI_BASE_URL: env.openai.url, OPENAI_API_KEY: 'sk-upstream', ANTHROPIC_BASE_URL: env.openai.url.replace(/\/v1$/, '') });
  }, 60_000);
  afterAll(async () => {
    await env.svc?.dispose();
    await env.openai?.close();
  });
  return () => env;
}

/** The audit event of the request with this model (the case's tag), once the writer has flushed it. */
export async function eventOf(svc: TestServices, path: string, model: string): Promise<Json> {
  const rest = restClient(svc.gatewayUrl, svc.apiKey);
  for (let i = 0; i < 100; i++) {
    await svc.running.audit!.flush();
    const page = (await rest.get(`/v1/events/?path=${encodeURIComponent(path)}&limit=50`)).json;
    const found = (page.results as Json[]).find((e) => e.model === model);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no audit event for ${model}`);
}
