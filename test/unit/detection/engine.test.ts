import { createDetectionEngine, evaluate } from '../../../src/detection/engine';
import { RuleCache } from '../../../src/detection/match-rules';
import { AppError } from '../../../src/shared/errors';
import { registryOf, spyDetector } from './detector-fixture';
import { policyFixture } from './policy-fixture';

describe('evaluate: policy_mode × direction', () => {
  it.each([
    ['IO', 'input', true],
    ['IO', 'output', true],
    ['I', 'input', true],
    ['I', 'output', false],
    ['O', 'input', false],
    ['O', 'output', true],
  ] as const)('mode %s, direction %s → scanned %s', async (policyMode, direction, scanned) => {
    const config = policyFixture({ policyMode, denyList: { entries: ['secret'], match_type: 'contains' } });
    const result = await evaluate({ text: 'the secret', direction, config });
    expect(result.scanned).toBe(scanned);
    expect(result.blocked).toBe(scanned);
    expect(result.categories.map((c) => c.type)).toEqual(scanned ? ['deny_list'] : []);
  });

  it('runs input_detectors for input and output_detectors for output', async () => {
    const inSpy = spyDetector('prompt_attack');
    const outSpy = spyDetector('unknown_links');
    const engine = createDetectionEngine({ registry: registryOf([inSpy.detector, outSpy.detector]) });
    const config = policyFixture({
      inputDetectors: [{ detector_type: 'prompt_attack', threshold: 'L2', action: 'block' }],
      outputDetectors: [{ detector_type: 'unknown_links', threshold: 'L2', action: 'block' }],
    });
    await engine.evaluate({ text: 'in', direction: 'input', config });
    await engine.evaluate({ text: 'out', direction: 'output', config });
    expect(inSpy.calls).toEqual(['in']);
    expect(outSpy.calls).toEqual(['out']);
  });
});

describe('evaluate: order allow → deny → detectors → custom', () => {
  const email = { detector_type: 'pii/email' as const, threshold: 'L2' as const, action: 'log' as const };

  it('allow list exempts only the span it matches: deny list, detectors and custom detectors still run elsewhere', async () => {
    // Inside the allow-listed span (0..13) → exempt; the rest of the text is scanned and blocks.
    const spy = spyDetector('pii/email', [{ confidence: 1, start: 0, end: 1 }]);
    const engine = createDetectionEngine({ registry: registryOf([spy.detector]) });
    const config = policyFixture({
      allowList: { entries: ['INTERNAL TEST'], match_type: 'contains' },
      denyList: { entries: ['forbidden'], match_type: 'contains' },
      inputDetectors: [email],
      customDetectors: [{ name: 'ticket', pattern: 'TCK-\\d+', action: 'block' }],
    });
    const text = 'internal test: forbidden TCK-1';
    const result = await engine.evaluate({ text, direction: 'input', config });
    expect(result).toMatchObject({ allowListed: true, scanned: true, blocked: true });
    expect(result.categories.map((c) => c.type)).toEqual(['deny_list', 'custom/ticket']);
    expect(result.findings.map((f) => text.slice(f.start, f.end))).toEqual(['forbidden', 'TCK-1']);
    expect(spy.calls).toEqual([text]);
  });

  it('reports deny list, detectors and custom detectors in that order, all of them', async () => {
    const config = policyFixture({
      denyList: { entries: ['forbidden'], match_type: 'contains' },
      inputDetectors: [email],
      customDetectors: [{ name: 'ticket', pattern: 'TCK-\\d+', action: 'alert' }],
    });
    const text = 'TCK-42 is forbidden, mail bob@corp.io';
    const result = await evaluate({ text, direction: 'input', config });
    expect(result.categories).toEqual([
      { type: 'deny_list', confidence: 1, action: 'block' },
      { type: 'pii/email', confidence: 0.95, action: 'log' },
      { type: 'custom/ticket', confidence: 1, action: 'alert' },
    ]);
    expect(result.blocked).toBe(true);
    expect(result.blockReason).toBe('Blocked by deny_list');
    const spans = Object.fromEntries(result.findings.map((f) => [f.type, text.slice(f.start, f.end)]));
    expect(spans).toEqual({ deny_list: 'forbidden', 'pii/email': 'bob@corp.io', 'custom/ticket': 'TCK-42' });
    expect(result.outcomes).toEqual([
      { type: 'pii/email', status: 'ok', message: '', elapsedMs: expect.any(Number), failMode: 'closed' },
    ]);
  });
});

describe('evaluate: allow and deny match types', () => {
  it.each([
    ['contains', 'Hello WORLD', 'world', true],
    ['contains', 'hello', 'world', false],
    ['exact', '  Hello World \n', 'hello world', true],
    ['exact', 'hello world!', 'hello world', false],
    ['regex', 'order 1234', '^order \\d+$', true],
    ['regex', 'ORDER 1234', '^order \\d+$', false],
  ] as const)('%s: text %j vs entry %j → allow-listed %s', async (match_type, text, entry, allowed) => {
    const result = await evaluate({ text, direction: 'input', config: policyFixture({ allowList: { entries: [entry], match_type } }) });
    expect(result.allowListed).toBe(allowed);
  });

  it('reports one deny finding per match, in text order, with spans into the original text', async () => {
    const text = 'Bad, bad and BAD';
    const config = policyFixture({ denyList: { entries: ['bad', 'and'], match_type: 'contains' } });
    const result = await evaluate({ text, direction: 'output', config });
    expect(result.findings.map((f) => text.slice(f.start, f.end))).toEqual(['Bad', 'bad', 'and', 'BAD']);
    expect(result.categories).toEqual([{ type: 'deny_list', confidence: 1, action: 'block' }]);
  });

  it('matches deny entries through zero-width and full-width disguises', async () => {
    const text = 'please ｆｏｒ\u200Bbidden now';
    const config = policyFixture({ denyList: { entries: ['forbidden'], match_type: 'contains' } });
    const result = await evaluate({ text, direction: 'input', config });
    expect(result.blocked).toBe(true);
    expect(text.slice(result.findings[0]?.start, result.findings[0]?.end)).toBe('ｆｏｒ\u200Bbidden');
  });

  it('exact deny entries report the trimmed whole text', async () => {
    const text = '  drop table  ';
    const config = policyFixture({ denyList: { entries: ['DROP TABLE'], match_type: 'exact' } });
    const result = await evaluate({ text, direction: 'input', config });
    expect(result.findings).toEqual([{ type: 'deny_list', confidence: 1, start: 2, end: 12, fired: true, signal: 'deny_list' }]);
  });
});

describe('evaluate: configuration errors and RE2', () => {
  const expectInvalid = async (promise: Promise<unknown>, text: string) => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).type).toBe('invalid_request');
    expect((err as AppError).message).toContain(text);
  };

  it('rejects a custom pattern RE2 cannot compile, naming the detector (lookbehind is not RE2)', async () => {
    const config = policyFixture({ customDetectors: [{ name: 'lookbehind', pattern: '(?<=a)b', action: 'block' }] });
    await expectInvalid(evaluate({ text: 'ab', direction: 'input', config }), 'custom detector "lookbehind"');
  });

  it('rejects bad deny and allow regex entries, naming the entry', async () => {
    const deny = policyFixture({ denyList: { entries: ['ok', '(unclosed'], match_type: 'regex' } });
    await expectInvalid(evaluate({ text: 'x', direction: 'input', config: deny }), 'deny_list entry 1');
    const allow = policyFixture({ allowList: { entries: ['\\1'], match_type: 'regex' } });
    await expectInvalid(evaluate({ text: 'x', direction: 'input', config: allow }), 'allow_list entry 0');
  });

  it('rejects a configuration error even when the direction is not scanned', async () => {
    const config = policyFixture({ policyMode: 'O', customDetectors: [{ name: 'bad', pattern: '(', action: 'block' }] });
    await expectInvalid(evaluate({ text: 'x', direction: 'input', config }), 'custom detector "bad"');
  });

  it('rejects a detector listed twice for one direction', async () => {
    const entry = { detector_type: 'pii/email' as const, threshold: 'L2' as const, action: 'log' as const };
    const config = policyFixture({ outputDetectors: [entry, { ...entry, action: 'block' }] });
    await expectInvalid(evaluate({ text: 'x', direction: 'output', config }), 'more than once in output_detectors');
  });

  // The speed of this pattern (catastrophic backtracking elsewhere, linear on RE2) is measured by `npm run bench:adversarial`.
  it('runs a catastrophic-backtracking custom pattern to the right answer either way', async () => {
    const config = policyFixture({ customDetectors: [{ name: 'evil', pattern: '(a+)+$', action: 'block' }] });
    const miss = await evaluate({ text: `${'a'.repeat(50_000)}!`, direction: 'input', config });
    expect(miss.blocked).toBe(false);
    expect(miss.categories).toEqual([]);
    const hit = await evaluate({ text: 'a'.repeat(50_000), direction: 'input', config });
    expect(hit.blocked).toBe(true);
    expect(hit.categories.map((c) => c.type)).toEqual(['custom/evil']);
  });

  it('skips empty matches of custom patterns', async () => {
    const config = policyFixture({ customDetectors: [{ name: 'maybe', pattern: 'x*', action: 'block' }] });
    const result = await evaluate({ text: 'ab xx c', direction: 'input', config });
    expect(result.findings).toEqual([{ type: 'custom/maybe', confidence: 1, start: 3, end: 5, fired: true, signal: 'custom:maybe' }]);
  });

  it('caches compiled rules per cache_key, recompiling when the patterns behind a key change', async () => {
    const cache = new RuleCache(2);
    const engine = createDetectionEngine({ ruleCache: cache });
    const v1 = policyFixture({ cacheKey: 'p1', customDetectors: [{ name: 'a', pattern: 'alpha', action: 'block' }] });
    const v2 = policyFixture({ cacheKey: 'p1', customDetectors: [{ name: 'a', pattern: 'beta', action: 'block' }] });
    expect((await engine.evaluate({ text: 'alpha', direction: 'input', config: v1 })).blocked).toBe(true);
    expect((await engine.evaluate({ text: 'alpha', direction: 'input', config: v2 })).blocked).toBe(false);
    await engine.evaluate({ text: 'x', direction: 'input', config: { ...v1, cacheKey: 'p2' } });
    await engine.evaluate({ text: 'x', direction: 'input', config: { ...v1, cacheKey: 'p3' } });
    await engine.evaluate({ text: 'x', direction: 'input', config: { ...v1, cacheKey: '' } });
    expect(cache.size).toBe(2);
  });
});
