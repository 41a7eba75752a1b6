import { CLASSIFIER_TYPES, type ClassifierBackend, type ClassifierScores, type ClassifierType } from '../../../../src/detection/classifiers/backend';
import { ClassifierDetector, classifierDetectorFactory } from '../../../../src/detection/classifiers/classifier-detector';
import { ClassifierRouter } from '../../../../src/detection/classifiers/router';
import * as sharedCalls from '../../../../src/detection/classifiers/shared-calls';
import { windowSpans } from '../../../../src/detection/classifiers/windows';
import { createDetectionEngine } from '../../../../src/detection/engine';
import { DetectorRegistry } from '../../../../src/detection/registry';
import type { DetectorFactory } from '../../../../src/detection/detector';
import type { DetectorType } from '../../../../src/shared/detector-catalog';
import { policyFixture } from '../policy-fixture';

const MODERATION = CLASSIFIER_TYPES.filter((t) => t.startsWith('moderated_content/'));

/** A backend that records every classify call and scores by a function of the window text. */
function spyBackend(name: string, score: (text: string) => number, types: readonly ClassifierType[] = CLASSIFIER_TYPES) {
  const calls: string[] = [];
  const backend: ClassifierBackend = {
    name,
    types,
    classify: async (text: string): Promise<ClassifierScores> => {
      calls.push(text);
      await new Promise((r) => setImmediate(r));
      const s = score(text);
      return Object.fromEntries(types.map((t) => [t, s]));
    },
  };
  return { backend, calls };
}

function engineFor(router: ClassifierRouter) {
  const factories = new Map<DetectorType, DetectorFactory>(CLASSIFIER_TYPES.map((t) => [t, classifierDetectorFactory(t, () => router)]));
  return createDetectionEngine({ registry: new DetectorRegistry(factories) });
}

const allModeration = policyFixture({ inputDetectors: MODERATION.map((t) => ({ detector_type: t, threshold: 'L2' as const, action: 'block' as const })) });
const signal = () => new AbortController().signal;

describe('classifier router', () => {
  it('one classify call per window is shared by the 13 moderation detectors', async () => {
    const spy = spyBackend('builtin', () => 0.1);
    const engine = engineFor(new ClassifierRouter({ backends: [spy.backend] }));
    const text = Array.from({ length: 900 }, (_, i) => `w${i}`).join(' '); // ~4.5 KB: 3 distinct windows, one view
    const result = await engine.evaluate({ text, direction: 'input', config: allModeration });
    expect(result.outcomes).toHaveLength(13);
    expect(result.outcomes.every((o) => o.status === 'ok')).toBe(true);
    expect(spy.calls).toHaveLength(3);
    expect(new Set(spy.calls).size).toBe(3);
  });

  it('the canonical view re-scores only the windows its edits touched (its windows are aligned with the normalised view)', async () => {
    const spy = spyBackend('builtin', () => 0.1);
    const engine = engineFor(new ClassifierRouter({ backends: [spy.backend] }));
    const words = Array.from({ length: 15_000 }, (_, i) => `w${i}`);
    // Two HTML references 50 KB apart: the engine adds a canonical view with them decoded.
    words[2000] = 'fish&amp;chips';
    words[9000] = 'caf&#233;';
    const text = words.join(' '); // ~94 KB
    const result = await engine.evaluate({ text, direction: 'input', config: allModeration });
    expect(result.outcomes.every((o) => o.status === 'ok')).toBe(true);
    const windowsPerView = windowSpans(text.length).length; // 52
    expect(windowsPerView).toBeGreaterThan(50);
    expect(spy.calls.length).toBeGreaterThanOrEqual(windowsPerView + 2);
    expect(spy.calls.length).toBeLessThanOrEqual(windowsPerView + 4);
    expect(spy.calls.filter((c) => c.includes('fish&chips'))).not.toHaveLength(0);
    expect(spy.calls.filter((c) => c.includes('café'))).not.toHaveLength(0);
  });

  it('the detectors of one scan (one signal) take one batch of scores; another signal asks again, a failed batch is retried', async () => {
    const batches = jest.spyOn(sharedCalls.SharedClassifyCalls.prototype, 'classifyAll');
    try {
      let fail = true;
      const spy = spyBackend('builtin', (text) => {
        if (fail && text.startsWith('u0 ')) throw new Error('backend down');
        return 0.1;
      });
      const router = new ClassifierRouter({ backends: [spy.backend] });
      const engine = engineFor(router);
      const text = Array.from({ length: 900 }, (_, i) => `u${i}`).join(' '); // 3 windows, one view
      const failed = await engine.evaluate({ text, direction: 'input', config: allModeration });
      expect(failed.outcomes.every((o) => o.status === 'error')).toBe(true);
      expect(batches).toHaveBeenCalledTimes(1); // not one per detector (13)
      // The same signal again after a failure: the failed batch is not reused, the backend is asked again.
      const one = signal();
      await expect(router.scoreWindows('moderated_content/hate', text, one)).rejects.toThrow('backend down');
      fail = false;
      expect(await router.scoreWindows('moderated_content/hate', text, one)).toHaveLength(3);
      expect(batches).toHaveBeenCalledTimes(3);
      // Two callers with their own signals each get their own batch (one's abort never cancels the other's).
      const a = new AbortController();
      const aborted = router.scoreWindows('moderated_content/hate', `${text} more`, a.signal);
      const other = router.scoreWindows('moderated_content/violence', `${text} more`, signal());
      a.abort(new Error('caller gone'));
      await expect(aborted).rejects.toThrow('caller gone');
      expect(await other).toHaveLength(3);
      expect(batches).toHaveBeenCalledTimes(5);
    } finally {
      batches.mockRestore();
    }
  });

  it('cuts and hashes a text\'s windows once for all the detectors asking', async () => {
    const digests = jest.spyOn(sharedCalls, 'contentDigest');
    try {
      const spy = spyBackend('builtin', () => 0.1);
      const engine = engineFor(new ClassifierRouter({ backends: [spy.backend] }));
      const text = Array.from({ length: 900 }, (_, i) => `v${i}`).join(' '); // 3 windows, one view
      await engine.evaluate({ text, direction: 'input', config: allModeration });
      expect(spy.calls).toHaveLength(3);
      expect(digests).toHaveBeenCalledTimes(3); // not 3 per detector (39)
    } finally {
      digests.mockRestore();
    }
  });

  it('routes per type by configuration and validates it at construction', async () => {
    const builtin = spyBackend('builtin', () => 0.2);
    const remote = spyBackend('remote-moderation', () => 0.95, MODERATION);
    const router = new ClassifierRouter({
      backends: [builtin.backend, remote.backend],
      routing: { byType: Object.fromEntries(MODERATION.map((t) => [t, 'remote-moderation'])) },
    });
    expect(router.describe().prompt_attack).toBe('builtin');
    expect(router.describe()['moderated_content/hate']).toBe('remote-moderation');
    const hate = await router.scoreWindows('moderated_content/hate', 'some text', signal());
    const attack = await router.scoreWindows('prompt_attack', 'some text', signal());
    expect(hate).toEqual([{ start: 0, end: 9, score: 0.95 }]);
    expect(attack).toEqual([{ start: 0, end: 9, score: 0.2 }]);
    expect(() => new ClassifierRouter({ backends: [builtin.backend], routing: { defaultBackend: 'nope' } })).toThrow(/unknown backend "nope"/);
    expect(() => new ClassifierRouter({ backends: [remote.backend], routing: { defaultBackend: 'remote-moderation' } })).toThrow(
      /does not score prompt_attack/,
    );
    expect(() => new ClassifierRouter({ backends: [builtin.backend, builtin.backend] })).toThrow(/twice/);
  });

  it('a backend answer without a valid score for the type is an error, not a pass', async () => {
    const broken: ClassifierBackend = { name: 'builtin', types: CLASSIFIER_TYPES, classify: async () => ({ prompt_attack: 2 }) };
    const router = new ClassifierRouter({ backends: [broken] });
    await expect(router.scoreWindows('prompt_attack', 'text', signal())).rejects.toThrow(/no valid score/);
    await expect(router.scoreWindows('jailbreak', 'text', signal())).rejects.toThrow(/no valid score/);
  });

  it('a failing backend fails its detectors (engine error outcome, fail closed blocks)', async () => {
    const failing: ClassifierBackend = {
      name: 'builtin',
      types: CLASSIFIER_TYPES,
      classify: async () => {
        throw new Error('backend down');
      },
    };
    const engine = engineFor(new ClassifierRouter({ backends: [failing] }));
    const config = policyFixture({ inputDetectors: [{ detector_type: 'prompt_attack', threshold: 'L2', action: 'block' }] });
    const result = await engine.evaluate({ text: 'hello', direction: 'input', config, failMode: 'closed' });
    expect(result.outcomes[0]).toMatchObject({ type: 'prompt_attack', status: 'error', message: 'backend down' });
    expect(result.blocked).toBe(true);
  });

  it('failures are not cached: the next request asks again', async () => {
    let fail = true;
    const flaky: ClassifierBackend = {
      name: 'builtin',
      types: CLASSIFIER_TYPES,
      classify: async () => {
        if (fail) throw new Error('transient');
        return Object.fromEntries(CLASSIFIER_TYPES.map((t) => [t, 0.5]));
      },
    };
    const router = new ClassifierRouter({ backends: [flaky] });
    await expect(router.scoreWindows('prompt_attack', 'text', signal())).rejects.toThrow('transient');
    fail = false;
    await expect(router.scoreWindows('prompt_attack', 'text', signal())).resolves.toEqual([{ start: 0, end: 4, score: 0.5 }]);
  });

  it('the shared call is aborted only when every waiting detector gave up', async () => {
    const seen: AbortSignal[] = [];
    const slow: ClassifierBackend = {
      name: 'builtin',
      types: CLASSIFIER_TYPES,
      classify: (_text, s) => {
        seen.push(s);
        return new Promise(() => undefined); // never answers
      },
    };
    const router = new ClassifierRouter({ backends: [slow] });
    const a = new AbortController();
    const b = new AbortController();
    const pa = router.scoreWindows('prompt_attack', 'same text', a.signal);
    const pb = router.scoreWindows('jailbreak', 'same text', b.signal);
    await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(1);
    a.abort(new Error('deadline a'));
    await expect(pa).rejects.toThrow('deadline a');
    expect(seen[0]?.aborted).toBe(false);
    b.abort(new Error('deadline b'));
    await expect(pb).rejects.toThrow('deadline b');
    expect(seen[0]?.aborted).toBe(true);
  });

  it('reports one finding per window at or above L4, spanning the window', async () => {
    const router = new ClassifierRouter({ backends: [spyBackend('builtin', (t) => (t.includes('ATTACK') ? 0.97 : 0.05)).backend] });
    const detector = new ClassifierDetector('prompt_attack', () => router);
    const text = `${'a'.repeat(9000)} ATTACK`;
    const findings = await detector.detect({ text, direction: 'input' }, signal());
    expect(findings).toEqual([{ confidence: 0.97, start: text.length - 2000, end: text.length, signal: 'classifier:builtin' }]);
    expect(await detector.detect({ text: '   ', direction: 'input' }, signal())).toEqual([]);
  });
});

/** An in-process backend with classifyNow: records every window it scores, through either entry point. */
function localBackend(name: string, score: (text: string) => number, options: { nowLimit?: number } = {}) {
  const scoredNow: string[][] = [];
  const classified: string[] = [];
  const scores = (text: string): ClassifierScores => Object.fromEntries(CLASSIFIER_TYPES.map((t) => [t, score(text)]));
  const backend: ClassifierBackend = {
    name,
    types: CLASSIFIER_TYPES,
    local: true,
    classify: async (text) => {
      classified.push(text);
      return scores(text);
    },
    classifyNow: (texts) => {
      if (options.nowLimit !== undefined && texts.length >= options.nowLimit) return undefined;
      scoredNow.push([...texts]);
      return texts.map(scores);
    },
  };
  return { backend, scoredNow, classified };
}

describe('classifier router: scores at hand are answered without a promise', () => {
  const countsOf = (name: string) => ({ ...(sharedCalls.classifierWindowCounts.get(name) ?? { windows: 0, scored: 0 }) });

  it("a short text on an in-process backend: every classifier detector answers synchronously, with the async path's findings, and the window is scored and counted once", async () => {
    const local = localBackend('local-a', (t) => (t.includes('bad') ? 0.97 : 0.1));
    const router = new ClassifierRouter({ backends: [local.backend], routing: { defaultBackend: 'local-a' } });
    const detectors = CLASSIFIER_TYPES.map((t) => new ClassifierDetector(t, () => router));
    const before = countsOf('local-a');
    const scanSignal = signal();
    const answers = detectors.map((d) => d.detect({ text: 'a bad short text', direction: 'input' }, scanSignal));
    expect(answers.every((a) => Array.isArray(a))).toBe(true);
    expect(answers[0]).toEqual([{ confidence: 0.97, start: 0, end: 16, signal: 'classifier:local-a' }]);
    expect(local.scoredNow).toEqual([['a bad short text']]);
    expect(local.classified).toEqual([]);
    expect(countsOf('local-a')).toEqual({ windows: before.windows + 1, scored: before.scored + 1 });

    // The same findings as the promise path of a backend without classifyNow.
    const spy = spyBackend('spy-a', (t) => (t.includes('bad') ? 0.97 : 0.1));
    const asyncRouter = new ClassifierRouter({ backends: [spy.backend], routing: { defaultBackend: 'spy-a' } });
    const viaPromise = new ClassifierDetector('prompt_attack', () => asyncRouter).detect({ text: 'a bad short text', direction: 'input' }, signal());
    expect(viaPromise).toBeInstanceOf(Promise);
    expect((await viaPromise).map((f) => ({ ...f, signal: '' }))).toEqual((answers[0] as unknown[]).map((f) => ({ ...(f as object), signal: '' })));
  });

  it('through the engine: a short text scored by an in-process backend gives the same verdict and findings as the promise path', async () => {
    const text = 'Please explain how photosynthesis works in plain words.';
    const local = localBackend('builtin', () => 0.96);
    const spy = spyBackend('builtin', () => 0.96);
    const viaNow = await engineFor(new ClassifierRouter({ backends: [local.backend] })).evaluate({ text, direction: 'input', config: allModeration });
    const viaPromise = await engineFor(new ClassifierRouter({ backends: [spy.backend] })).evaluate({ text, direction: 'input', config: allModeration });
    const withoutTimes = (r: typeof viaNow) => ({ ...r, elapsedMs: 0, outcomes: r.outcomes.map((o) => ({ ...o, elapsedMs: 0 })) });
    expect(withoutTimes(viaNow)).toEqual(withoutTimes(viaPromise));
    expect(viaNow.blocked).toBe(true);
    expect(local.classified).toEqual([]);
  });

  it('a backend without classifyNow answers synchronously only once its windows are scored (shared calls), never while they are in flight', async () => {
    const spy = spyBackend('spy-b', () => 0.2);
    const router = new ClassifierRouter({ backends: [spy.backend], routing: { defaultBackend: 'spy-b' } });
    expect(router.scoreWindowsNow('jailbreak', 'hello there', signal())).toBeUndefined();
    const pending = router.scoreWindows('jailbreak', 'hello there', signal());
    expect(router.scoreWindowsNow('prompt_attack', 'hello there', signal())).toBeUndefined(); // in flight
    await pending;
    expect(router.scoreWindowsNow('prompt_attack', 'hello there', signal())).toEqual([{ start: 0, end: 11, score: 0.2 }]);
    expect(spy.calls).toEqual(['hello there']);
  });

  it('an in-process backend that declines (too many windows for inline scoring) is asked through the promise path', async () => {
    const local = localBackend('local-c', () => 0.1, { nowLimit: 2 });
    const router = new ClassifierRouter({ backends: [local.backend], routing: { defaultBackend: 'local-c' } });
    const text = Array.from({ length: 900 }, (_, i) => `w${i}`).join(' '); // 3 windows
    expect(router.scoreWindowsNow('jailbreak', text, signal())).toBeUndefined();
    expect(await router.scoreWindows('jailbreak', text, signal())).toHaveLength(3);
    expect(local.classified).toHaveLength(3);
    expect(local.scoredNow).toEqual([]);
  });

  it('a backend failing synchronously fails the detector as the promise path does, and nothing is kept', async () => {
    let calls = 0;
    const failing: ClassifierBackend = {
      name: 'local-d',
      types: CLASSIFIER_TYPES,
      local: true,
      classify: () => Promise.reject(new Error('unreachable')),
      classifyNow: () => {
        calls++;
        throw new Error('model exploded');
      },
    };
    const router = new ClassifierRouter({ backends: [failing], routing: { defaultBackend: 'local-d' } });
    const engine = engineFor(router);
    const config = policyFixture({ inputDetectors: [{ detector_type: 'jailbreak', threshold: 'L2', action: 'block' }] });
    const result = await engine.evaluate({ text: 'hello', direction: 'input', config });
    expect(result.outcomes).toEqual([expect.objectContaining({ type: 'jailbreak', status: 'error', message: 'model exploded' })]);
    expect(result.blocked).toBe(true); // fail closed by default
    await engine.evaluate({ text: 'hello', direction: 'input', config });
    expect(calls).toBe(2); // the failure was not kept
  });
});
