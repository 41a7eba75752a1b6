import { randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import type { ClassifierBackend, ClassifierScores, ClassifierType } from '../backend';
import { BackendError } from './backend-errors';
import { joinUrl, postJson } from './http-json';
import { judgeSystemPrompt, judgeUserMessage, LLAMA_GUARD_CODES, LLAMA_GUARD_TYPES } from './llm-judge-prompt';

/**
 * Any OpenAI-compatible chat model as a classifier: `POST {baseUrl}/chat/completions`.
 *
 * - format `json_object` (default) / `json`: the fixed system prompt of llm-judge-prompt.ts asks for
 *   `{"categories": {"<type>": 0..1, …}}` over the configured types; `json_object` also sends
 *   `response_format: {type: "json_object"}` (vLLM, Ollama, OpenAI), `json` does not (servers that
 *   reject it). Every configured type must be present with a number in 0..1.
 * - format `llama_guard`: the content is sent as the user turn and the model's own template classifies it
 *   (Llama Guard via vLLM or Ollama); the answer is `safe` or `unsafe\nS1,S10`, mapped by LLAMA_GUARD_CODES.
 *
 * Anything else (not JSON, a missing or out-of-range score, an unknown S-code, a truncated answer) is a
 * malformed answer: a throw, never a pass. Error messages never quote the answer (it may echo the text).
 */

export const JUDGE_FORMATS = ['json_object', 'json', 'llama_guard'] as const;
export type JudgeFormat = (typeof JUDGE_FORMATS)[number];

const chatResponseSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
});
const verdictSchema = z.object({ categories: z.record(z.string(), z.unknown()) });
const score = z.number().min(0).max(1);

export interface LlmJudgeOptions {
  /** e.g. http://localhost:11434/v1 (the endpoint is `${baseUrl}/chat/completions`). */
  baseUrl: string;
  apiKey?: string;
  model: string;
  format: JudgeFormat;
  types: readonly ClassifierType[];
  dispatcher: Dispatcher;
}

export class LlmJudgeBackend implements ClassifierBackend {
  readonly name = 'llm-judge';
  readonly types: readonly ClassifierType[];
  private readonly url: string;
  private readonly systemPrompt: string;

  constructor(private readonly options: LlmJudgeOptions) {
    if (options.types.length === 0) throw new Error('llm-judge needs at least one type');
    if (options.format === 'llama_guard') {
      const unscorable = options.types.filter((t) => !LLAMA_GUARD_TYPES.includes(t));
      if (unscorable.length > 0) throw new Error(`llm-judge (llama_guard) cannot score ${unscorable.join(', ')}`);
    }
    this.types = [...options.types];
    this.url = joinUrl(options.baseUrl, '/chat/completions');
    this.systemPrompt = judgeSystemPrompt(this.types);
  }

  async classify(text: string, signal: AbortSignal): Promise<ClassifierScores> {
    const raw = await postJson({
      name: this.name,
      dispatcher: this.options.dispatcher,
      url: this.url,
      bearer: this.options.apiKey,
      body: this.requestBody(text),
      signal,
    });
    const parsed = chatResponseSchema.safeParse(raw);
    if (!parsed.success) throw new BackendError('malformed', `${this.name}: response lacks choices[0].message`);
    const choice = parsed.data.choices[0] as z.infer<typeof chatResponseSchema>['choices'][number];
    if (choice.finish_reason === 'length') throw new BackendError('malformed', `${this.name}: answer was truncated (finish_reason length)`);
    const content = choice.message.content;
    if (typeof content !== 'string' || content.trim() === '') throw new BackendError('malformed', `${this.name}: empty answer`);
    return this.options.format === 'llama_guard' ? this.parseLlamaGuard(content) : this.parseJson(content);
  }

  private requestBody(text: string): Record<string, unknown> {
    const { model, format } = this.options;
    if (format === 'llama_guard') {
      return { model, messages: [{ role: 'user', content: text }], temperature: 0, max_tokens: 32 };
    }
    const body: Record<string, unknown> = {
      model,
      messages: [
        { role: 'system', content: this.systemPrompt },
        { role: 'user', content: judgeUserMessage(text, randomBytes(8).toString('hex')) },
      ],
      temperature: 0,
      max_tokens: 64 + 24 * this.types.length,
    };
    if (format === 'json_object') body.response_format = { type: 'json_object' };
    return body;
  }

  private parseJson(content: string): ClassifierScores {
    let value: unknown;
    try {
      value = JSON.parse(stripFence(content));
    } catch {
      throw new BackendError('malformed', `${this.name}: answer is not JSON`);
    }
    const verdict = verdictSchema.safeParse(value);
    if (!verdict.success) throw new BackendError('malformed', `${this.name}: answer lacks a "categories" object`);
    const out: ClassifierScores = {};
    for (const type of this.types) {
      const s = score.safeParse(verdict.data.categories[type]);
      if (!s.success) throw new BackendError('malformed', `${this.name}: categories["${type}"] is missing or not a number in 0..1`);
      out[type] = s.data;
    }
    return out;
  }

  private parseLlamaGuard(content: string): ClassifierScores {
    const lines = content.trim().split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
    const verdict = lines[0]?.toLowerCase();
    const out: ClassifierScores = Object.fromEntries(this.types.map((t) => [t, 0]));
    if (verdict === 'safe' && lines.length === 1) return out;
    if (verdict !== 'unsafe' || lines.length !== 2) {
      throw new BackendError('malformed', `${this.name}: answer is neither "safe" nor "unsafe" followed by a line of S-codes`);
    }
    const codes = (lines[1] as string).split(',').map((c) => c.trim().toUpperCase());
    for (const code of codes) {
      const types = LLAMA_GUARD_CODES[code];
      if (!types) throw new BackendError('malformed', `${this.name}: unknown Llama Guard category code`);
      for (const t of types) if (t in out) out[t] = 1;
    }
    return out;
  }
}

/** Models without a JSON mode often wrap the object in a Markdown code fence. */
function stripFence(content: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(content);
  return m ? (m[1] as string) : content.trim();
}
