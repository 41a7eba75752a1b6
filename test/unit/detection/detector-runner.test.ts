import type { Detector, DetectorFinding, DetectorInput } from '../../../src/detection/detector';
import { Deadline, runDetector, type DetectorRun } from '../../../src/detection/detector-runner';

/** A detector whose answer per view is given by `answer` (a value, a promise, or a throw). */
function detectorOf(answer: (view: number) => DetectorFinding[] | Promise<DetectorFinding[]>): Detector & { seen: string[] } {
  const seen: string[] = [];
  return {
    type: 'pii/email',
    seen,
    detect(input: DetectorInput) {
      seen.push(input.text);
      return answer(seen.length - 1);
    },
  };
}

const views = (...texts: string[]): DetectorInput[] => texts.map((text) => ({ text, direction: 'input' }));
const finding = (start: number, end: number): DetectorFinding => ({ confidence: 0.9, start, end });

describe('runDetector: synchronous detectors run without a promise', () => {
  let deadline: Deadline;
  beforeEach(() => (deadline = new Deadline(1_000)));
  afterEach(() => deadline.dispose());

  it('a detector that answers synchronously on every view gives its run back at once (not a promise)', () => {
    const detector = detectorOf((i) => (i === 0 ? [finding(0, 2)] : []));
    const run = runDetector({ detector, inputs: views('ab', 'cd'), timeoutMs: 1_000, maxFindings: 10, deadline });
    expect(run).not.toBeInstanceOf(Promise);
    expect(run).toMatchObject({ status: 'ok', message: '', findings: [[finding(0, 2)], []] });
    expect(detector.seen).toEqual(['ab', 'cd']);
  });

  it('a synchronous throw, or an invalid finding, is an error run with the findings of the views before it, still not a promise', () => {
    const throwing = detectorOf((i) => {
      if (i === 1) throw new Error('boom');
      return [finding(0, 1)];
    });
    const run = runDetector({ detector: throwing, inputs: views('ab', 'cd', 'ef'), timeoutMs: 1_000, maxFindings: 10, deadline }) as DetectorRun;
    expect(run).toMatchObject({ status: 'error', message: 'boom', findings: [[finding(0, 1)], [], []] });
    expect(throwing.seen).toEqual(['ab', 'cd']);

    const invalid = runDetector({ detector: detectorOf(() => [finding(0, 99)]), inputs: views('ab'), timeoutMs: 1_000, maxFindings: 10, deadline }) as DetectorRun;
    expect(invalid).toMatchObject({ status: 'error', message: expect.stringContaining('invalid finding') });
  });

  it('a detector that returns a promise on its second view makes the run a promise, from that view on, with every view scanned', async () => {
    const detector = detectorOf((i) => (i === 1 ? Promise.resolve([finding(1, 2)]) : [finding(0, 1)]));
    const run = runDetector({ detector, inputs: views('ab', 'cd', 'ef'), timeoutMs: 1_000, maxFindings: 10, deadline });
    expect(run).toBeInstanceOf(Promise);
    expect(detector.seen).toEqual(['ab', 'cd']); // the third view waits for the second's answer
    await expect(run).resolves.toMatchObject({ status: 'ok', findings: [[finding(0, 1)], [finding(1, 2)], [finding(0, 1)]] });
    expect(detector.seen).toEqual(['ab', 'cd', 'ef']);
  });

  it('a rejected promise is an error run that keeps the findings of the views before it', async () => {
    const detector = detectorOf((i) => (i === 0 ? [finding(0, 1)] : Promise.reject(new Error('backend down'))));
    await expect(runDetector({ detector, inputs: views('ab', 'cd'), timeoutMs: 1_000, maxFindings: 10, deadline })).resolves.toMatchObject({
      status: 'error',
      message: 'backend down',
      findings: [[finding(0, 1)], []],
    });
  });

  it('an asynchronous detector that outlasts the shared deadline is a timeout run', async () => {
    const short = new Deadline(20);
    try {
      const detector = detectorOf(() => new Promise<DetectorFinding[]>(() => undefined));
      const run = await runDetector({ detector, inputs: views('ab'), timeoutMs: 20, maxFindings: 10, deadline: short });
      expect(run).toMatchObject({ status: 'timeout', message: 'detector exceeded its 20 ms budget' });
    } finally {
      short.dispose();
    }
  });

  it('a synchronous detector past its own budget between two views skips the rest as a timeout', () => {
    const detector = detectorOf(() => {
      const until = performance.now() + 15;
      while (performance.now() < until); // synchronous work that cannot be interrupted
      return [finding(0, 1)];
    });
    const run = runDetector({ detector, inputs: views('ab', 'cd', 'ef'), timeoutMs: 10, maxFindings: 10, deadline }) as DetectorRun;
    expect(run.status).toBe('timeout');
    expect(run.findings[0]).toEqual([finding(0, 1)]); // its findings are kept
    expect(detector.seen).toEqual(['ab']);
  });

  it('without a shared deadline the run makes its own and disposes of it (no timer left behind), in both paths', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const sync = runDetector({ detector: detectorOf(() => []), inputs: views('ab'), timeoutMs: 60_000, maxFindings: 10 });
    expect(sync).toMatchObject({ status: 'ok' });
    expect(timers()).toBe(before);
    const run = await runDetector({ detector: detectorOf(() => Promise.resolve([])), inputs: views('ab'), timeoutMs: 60_000, maxFindings: 10 });
    expect(run).toMatchObject({ status: 'ok' });
    expect(timers()).toBe(before);
  });
});
