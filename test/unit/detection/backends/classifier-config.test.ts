import { CLASSIFIER_TYPES } from '../../../../src/detection/classifiers/backend';
import { parseClassifierBackendsConfig } from '../../../../src/detection/classifiers/backends/classifier-config';
import { ConfigError, loadConfig } from '../../../../src/shared/config';

const parse = (env: Record<string, string>) => parseClassifierBackendsConfig(loadConfig(env));
const problemsOf = (env: Record<string, string>): string[] => {
  try {
    parse(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('parseClassifierBackendsConfig', () => {
  it('default: every classifier type uses builtin, no external backend is configured', () => {
    const c = parse({});
    expect([...c.assignments.keys()]).toEqual([...CLASSIFIER_TYPES]);
    expect([...c.assignments.values()].every((names) => names.join() === 'builtin')).toBe(true);
    expect(c.openaiModeration).toBeUndefined();
    expect(c.httpClassifier).toBeUndefined();
    expect(c.llmJudge).toBeUndefined();
    expect(c.resilience).toEqual({
      timeoutMs: 800,
      maxConcurrency: 16,
      maxQueue: 64,
      cacheSize: 5000,
      cacheTtlMs: 600_000,
      breakerFailures: 5,
      breakerCooldownMs: 30_000,
    });
  });

  it('composes: builtin + http-classifier for prompt attacks, openai-moderation for moderated_content/*', () => {
    const c = parse({
      CLASSIFIER_BACKENDS: ' prompt_attack, jailbreak = builtin, http-classifier ; moderated_content/*=openai-moderation; ',
      HTTP_CLASSIFIER_URL: 'http://tei:8080/',
      OPENAI_MODERATION_API_KEY: 'sk-x',
    });
    expect(c.assignments.get('prompt_attack')).toEqual(['builtin', 'http-classifier']);
    expect(c.assignments.get('jailbreak')).toEqual(['builtin', 'http-classifier']);
    expect(c.assignments.get('moderated_content/illicit_violent')).toEqual(['openai-moderation']);
    expect(c.openaiModeration).toEqual({ baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-x', model: 'omni-moderation-latest' });
    expect(c.httpClassifier).toMatchObject({ baseUrl: 'http://tei:8080', path: '/predict', maxChars: 1200 });
    expect([...c.httpClassifier!.labels]).toEqual([
      ['MALICIOUS', 'prompt_attack'],
      ['INJECTION', 'prompt_attack'],
      ['JAILBREAK', 'jailbreak'],
    ]);
  });

  it('later entries override earlier ones; * means every type', () => {
    const c = parse({
      CLASSIFIER_BACKENDS: '*=llm-judge;moderated_content/hate=builtin',
      LLM_JUDGE_URL: 'http://vllm:8000/v1',
      LLM_JUDGE_MODEL: 'meta-llama/Llama-Guard-3-8B',
    });
    expect(c.assignments.get('prompt_attack')).toEqual(['llm-judge']);
    expect(c.assignments.get('moderated_content/hate')).toEqual(['builtin']);
    expect(c.llmJudge).toEqual({ baseUrl: 'http://vllm:8000/v1', apiKey: undefined, model: 'meta-llama/Llama-Guard-3-8B', format: 'json_object' });
  });

  it('custom labels, path and max chars for the http-classifier', () => {
    const c = parse({
      CLASSIFIER_BACKENDS: 'prompt_attack=http-classifier',
      HTTP_CLASSIFIER_URL: 'http://tei:8080',
      HTTP_CLASSIFIER_PATH: '/classify',
      HTTP_CLASSIFIER_LABELS: 'injection = prompt_attack',
      HTTP_CLASSIFIER_MAX_CHARS: '900',
    });
    expect(c.httpClassifier).toMatchObject({ path: '/classify', maxChars: 900 });
    expect([...c.httpClassifier!.labels]).toEqual([['INJECTION', 'prompt_attack']]);
  });

  it.each([
    [{ CLASSIFIER_BACKENDS: 'prompt_attak=builtin' }, 'CLASSIFIER_BACKENDS: unknown classifier type "prompt_attak"'],
    [{ CLASSIFIER_BACKENDS: 'prompt_attack=gpt' }, 'CLASSIFIER_BACKENDS: unknown backend "gpt" (expected builtin, openai-moderation, http-classifier, llm-judge, onnx)'],
    [{ CLASSIFIER_BACKENDS: 'prompt_attack' }, 'CLASSIFIER_BACKENDS: "prompt_attack" must be of the form types=backends'],
    [{ CLASSIFIER_BACKENDS: 'prompt_attack=' }, 'CLASSIFIER_BACKENDS: "prompt_attack=" names no backend'],
    [{ CLASSIFIER_BACKENDS: 'pii/email=builtin' }, 'unknown classifier type "pii/email"'],
    [
      { CLASSIFIER_BACKENDS: 'jailbreak=openai-moderation', OPENAI_MODERATION_API_KEY: 'k' },
      'CLASSIFIER_BACKENDS: openai-moderation only scores moderated_content/* (not jailbreak)',
    ],
    [{ CLASSIFIER_BACKENDS: 'moderated_content/*=openai-moderation' }, 'OPENAI_MODERATION_API_KEY: required when openai-moderation is used with https://api.openai.com'],
    [{ CLASSIFIER_BACKENDS: 'prompt_attack=http-classifier' }, 'HTTP_CLASSIFIER_URL: required when http-classifier is used'],
    [
      { CLASSIFIER_BACKENDS: 'moderated_content/hate=http-classifier', HTTP_CLASSIFIER_URL: 'http://tei' },
      'CLASSIFIER_BACKENDS: http-classifier has no label for moderated_content/hate (see HTTP_CLASSIFIER_LABELS)',
    ],
    [
      { CLASSIFIER_BACKENDS: 'prompt_attack=http-classifier', HTTP_CLASSIFIER_URL: 'http://tei', HTTP_CLASSIFIER_LABELS: 'MALICIOUS' },
      'HTTP_CLASSIFIER_LABELS: "MALICIOUS" must be of the form LABEL=detector_type',
    ],
    [
      { CLASSIFIER_BACKENDS: 'prompt_attack=http-classifier', HTTP_CLASSIFIER_URL: 'http://tei', HTTP_CLASSIFIER_LABELS: 'MALICIOUS=attack' },
      'HTTP_CLASSIFIER_LABELS: "attack" is not a classifier type',
    ],
    [
      { CLASSIFIER_BACKENDS: 'prompt_attack=http-classifier', HTTP_CLASSIFIER_URL: 'http://tei', HTTP_CLASSIFIER_LABELS: 'A=prompt_attack,a=jailbreak' },
      'HTTP_CLASSIFIER_LABELS: label "A" is mapped twice',
    ],
    [{ CLASSIFIER_BACKENDS: 'prompt_attack=llm-judge' }, 'LLM_JUDGE_URL: required when llm-judge is used'],
    [{ CLASSIFIER_BACKENDS: 'prompt_attack=llm-judge', LLM_JUDGE_URL: 'http://o:11434/v1' }, 'LLM_JUDGE_MODEL: required when llm-judge is used'],
    [
      { CLASSIFIER_BACKENDS: '*=llm-judge', LLM_JUDGE_URL: 'http://o/v1', LLM_JUDGE_MODEL: 'llama-guard3', LLM_JUDGE_FORMAT: 'llama_guard' },
      'CLASSIFIER_BACKENDS: llm-judge with LLM_JUDGE_FORMAT=llama_guard cannot score prompt_attack, jailbreak, moderated_content/harassment',
    ],
  ])('rejects %j naming the variable', (env, message) => {
    expect(problemsOf(env).join('\n')).toContain(message);
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({ CLASSIFIER_BACKENDS: 'nope=builtin;prompt_attack=llm-judge,http-classifier' });
    expect(problems).toHaveLength(4); // unknown type, HTTP_CLASSIFIER_URL, LLM_JUDGE_URL, LLM_JUDGE_MODEL
  });

  it('settings of unused backends are not required', () => {
    expect(() => parse({ CLASSIFIER_BACKENDS: 'prompt_attack=builtin', HTTP_CLASSIFIER_LABELS: 'whatever' })).not.toThrow();
  });

  it('a self-hosted moderation server needs no key', () => {
    const c = parse({ CLASSIFIER_BACKENDS: 'moderated_content/*=openai-moderation', OPENAI_MODERATION_URL: 'http://mod.internal/v1' });
    expect(c.openaiModeration).toEqual({ baseUrl: 'http://mod.internal/v1', apiKey: undefined, model: 'omni-moderation-latest' });
  });
});
