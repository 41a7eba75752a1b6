import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake Hugging Face text-embeddings-inference server hosting a sequence-classification model, speaking
 * TEI's wire format: `POST /predict` (and `/classify`, as some deployments expose) with
 * `{"inputs": "text"}` answers `[{"label", "score"}, …]` (every label, highest first); with
 * `{"inputs": ["a", "b"]}` it answers `[[…], […]]`. Inputs longer than `maxInputChars` get TEI's 413
 * validation error, as a model with a 512-token limit does. Labels and scoring are scripted per model.
 */

export interface FakeTeiModel {
  labels: readonly string[];
  /** Probabilities per label for one input (must cover every label; they are sorted by the fake). */
  classify: (text: string) => Record<string, number>;
}

const ATTACK = /ignore (all )?(previous|prior) instructions|reveal your system prompt/i;
const JAILBREAK = /\bDAN\b|do anything now|no restrictions/i;

/** meta-llama/Llama-Prompt-Guard-2-86M: BENIGN / MALICIOUS. */
export const PROMPT_GUARD_2: FakeTeiModel = {
  labels: ['BENIGN', 'MALICIOUS'],
  classify: (text) => {
    const malicious = ATTACK.test(text) || JAILBREAK.test(text) ? 0.9987 : 0.0021;
    return { BENIGN: 1 - malicious, MALICIOUS: malicious };
  },
};

/** meta-llama/Prompt-Guard-86M (v1): BENIGN / INJECTION / JAILBREAK. */
export const PROMPT_GUARD_1: FakeTeiModel = {
  labels: ['BENIGN', 'INJECTION', 'JAILBREAK'],
  classify: (text) => {
    const jailbreak = JAILBREAK.test(text) ? 0.91 : 0.01;
    const injection = ATTACK.test(text) ? 0.87 : 0.02;
    return { BENIGN: Math.max(0, 1 - jailbreak - injection), INJECTION: injection, JAILBREAK: jailbreak };
  },
};

/** protectai/deberta-v3-base-prompt-injection-v2: SAFE / INJECTION. */
export const DEBERTA_INJECTION: FakeTeiModel = {
  labels: ['SAFE', 'INJECTION'],
  classify: (text) => {
    const injection = ATTACK.test(text) ? 0.9999 : 0.0003;
    return { SAFE: 1 - injection, INJECTION: injection };
  },
};

export type FakeTeiMode =
  | 'ok'
  | 'hang'
  | 'http-503'
  | 'not-json'
  /** 200, and a single input is answered in the nested `[[…]]` shape (Hugging Face Inference API style). */
  | 'nested'
  /** 200, with only the top label (as a pipeline with top_k=1 would). */
  | 'top-1'
  /** 200, with a score of -0.2 (e.g. raw logits served by mistake). */
  | 'out-of-range'
  /** 200, a batch answered with one list fewer than inputs. */
  | 'short-batch';

export interface FakeTei {
  url: string;
  /** Every request: path and the `inputs` received. */
  received: Array<{ path: string; inputs: unknown; authorization?: string }>;
  mode: FakeTeiMode;
  model: FakeTeiModel;
  maxInputChars: number;
  delayMs: number;
  close(): Promise<void>;
}

export async function startFakeTei(model: FakeTeiModel = PROMPT_GUARD_2): Promise<FakeTei> {
  const fake: Omit<FakeTei, 'url' | 'close'> = { received: [], mode: 'ok', model, maxInputChars: 100_000, delayMs: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { inputs?: unknown };
      fake.received.push({ path: req.url ?? '', inputs: body.inputs, authorization: req.headers.authorization });
      if (req.method !== 'POST' || (req.url !== '/predict' && req.url !== '/classify')) {
        res.writeHead(404).end();
        return;
      }
      if (fake.mode === 'hang') return;
      setTimeout(() => respond(res, fake, body.inputs), fake.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function respond(res: ServerResponse, fake: Omit<FakeTei, 'url' | 'close'>, inputs: unknown): void {
  const json = (status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  if (fake.mode === 'http-503') return json(503, { error: 'Model is overloaded', error_type: 'Overloaded' });
  if (fake.mode === 'not-json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[{"label": "BENIGN", "score": 0.9');
    return;
  }
  const batch = Array.isArray(inputs);
  const texts = (batch ? inputs : [inputs]) as string[];
  const tooLong = texts.find((t) => t.length > fake.maxInputChars);
  if (tooLong !== undefined) {
    return json(413, {
      error: `Input validation error: \`inputs\` must have less than 512 tokens. Given: ${Math.ceil(tooLong.length / 3)}`,
      error_type: 'Validation',
    });
  }
  const answers = texts.map((t) => {
    const probs = fake.model.classify(t);
    let list = fake.model.labels.map((label) => ({ label, score: probs[label] ?? 0 })).sort((a, b) => b.score - a.score);
    if (fake.mode === 'top-1') list = list.slice(0, 1);
    if (fake.mode === 'out-of-range') list = list.map((e, i) => (i === 0 ? { ...e, score: -0.2 } : e));
    return list;
  });
  if (fake.mode === 'short-batch') answers.pop();
  json(200, batch || fake.mode === 'nested' ? answers : answers[0]);
}
