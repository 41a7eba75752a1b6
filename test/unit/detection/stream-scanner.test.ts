import type { Detector } from '../../../src/detection/detector';
import { EmailDetector } from '../../../src/detection/detectors/pii/email-detector';
import { createDetectionEngine } from '../../../src/detection/engine';
import {
  STREAM_MIN_SCAN_CHARS,
  STREAM_WINDOW_CHARS,
  StreamScanner,
  streamWindow,
  type StreamUpdate,
} from '../../../src/detection/stream-scanner';
import type { DetectFinding } from '../../../src/shared/detection-client';
import type { DetectionPolicy } from '../../../src/shared/policy';
import { registryOf } from './detector-fixture';
import { policyFixture } from './policy-fixture';

const engine = createDetectionEngine({ registry: registryOf([new EmailDetector()]) });
const emailPolicy = (extra: Partial<DetectionPolicy> = {}) =>
  policyFixture({ inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }], ...extra });

/** Streams `text` in the given chunks; returns every update and every finding. */
async function streamText(chunks: string[], config = emailPolicy(), windowChars?: number) {
  const scanner = new StreamScanner(engine, { direction: 'input', config, windowChars });
  const updates: StreamUpdate[] = [];
  for (const chunk of chunks) {
    const update = await scanner.push(chunk);
    if (update) updates.push(update);
  }
  updates.push(await scanner.finish());
  const findings = updates.flatMap((u) => u.findings);
  return { scanner, updates, findings, last: updates[updates.length - 1] as StreamUpdate };
}

const chunked = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
const spansOf = (text: string, findings: DetectFinding[]) => findings.map((f) => text.slice(f.start, f.end));

describe('StreamScanner: findings across chunk boundaries', () => {
  const filler = 'lorem ipsum dolor sit amet, '.repeat(100); // 2800 chars
  const text = `${filler}write to jane.doe@acme-corp.com please. ${filler}`;
  const at = text.indexOf('jane.doe');

  it('finds an address split across two chunks once, with stream offsets', async () => {
    const split = at + 6;
    const { findings, last } = await streamText([text.slice(0, split), text.slice(split)]);
    expect(findings).toEqual([{ type: 'pii/email', confidence: 0.95, start: at, end: at + 'jane.doe@acme-corp.com'.length, fired: true, signal: 'signature:pii/email' }]);
    expect(last).toMatchObject({ done: true, blocked: true, releasedUpTo: text.length, received: text.length });
  });

  it('finds it once when the text arrives one character at a time', async () => {
    const { findings, updates } = await streamText([...text]);
    expect(spansOf(text, findings)).toEqual(['jane.doe@acme-corp.com']);
    expect(findings[0]?.start).toBe(at);
    // Tiny chunks are batched: a scan per STREAM_MIN_SCAN_CHARS settled characters, not per character.
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(text.length / STREAM_MIN_SCAN_CHARS) + 1);
  });

  it.each([1, 7, 64, 255, 256, 1000, 1023, 1024, 4096, 100_000])(
    'reports exactly what a whole-text scan reports, chunk size %d',
    async (size) => {
      const parts = Array.from({ length: 60 }, (_, i) => `${'word '.repeat((i * 37) % 400)}user${i}@corp${i % 7}.io `);
      const big = parts.join('');
      const whole = await engine.evaluate({ text: big, direction: 'input', config: emailPolicy() });
      const { findings } = await streamText(chunked(big, size));
      expect(findings).toEqual(whole.findings);
      expect(findings).toHaveLength(60);
    },
  );

  it('finds a base64 blob and a zero-width-split address straddling chunks', async () => {
    const blob = Buffer.from('contact: bob@corp.io').toString('base64');
    const t = `${filler}${blob} and ja\u200Bne@acme.io ${filler}`;
    const { findings } = await streamText(chunked(t, 13));
    expect(spansOf(t, findings)).toEqual([blob, 'ja\u200Bne@acme.io']);
  });

  it('reports a match only with its full context even with a small window', async () => {
    const t = `${'x '.repeat(500)}first.last+tag@mail.company.co.uk ${'y '.repeat(500)}`;
    const { findings } = await streamText(chunked(t, 3), emailPolicy(), 256);
    expect(spansOf(t, findings)).toEqual(['first.last+tag@mail.company.co.uk']);
  });
});

describe('StreamScanner: release offsets, verdict, memory', () => {
  it('releases only what has been scanned with a full window after it, monotonically', async () => {
    const text = 'a'.repeat(10_000);
    const { updates } = await streamText(chunked(text, 500));
    let previous = 0;
    for (const u of updates) {
      expect(u.releasedUpTo).toBeGreaterThanOrEqual(previous);
      if (!u.done) expect(u.releasedUpTo).toBeLessThanOrEqual(u.received - STREAM_WINDOW_CHARS);
      previous = u.releasedUpTo;
    }
    expect(updates[updates.length - 1]).toMatchObject({ releasedUpTo: 10_000, done: true, blocked: false });
  });

  it('reports a block as soon as the chunk containing it is scanned, and keeps it', async () => {
    const scanner = new StreamScanner(engine, { direction: 'input', config: emailPolicy() });
    const first = await scanner.push(`${'clean text. '.repeat(200)}`);
    expect(first).toMatchObject({ blocked: false, categories: [] });
    const second = await scanner.push(`mail bob@corp.io now. ${'more clean text. '.repeat(200)}`);
    expect(second).toMatchObject({ blocked: true, newCategories: [{ type: 'pii/email', confidence: 0.95, action: 'block' }] });
    expect(second?.findings).toHaveLength(1);
    const third = await scanner.push('x'.repeat(2000));
    expect(third).toMatchObject({ blocked: true, newCategories: [], findings: [], categories: [{ type: 'pii/email', confidence: 0.95, action: 'block' }] });
    expect((await scanner.finish()).blockReason).toBe('Blocked by pii/email');
  });

  it('keeps memory bounded by window + chunk', async () => {
    const scanner = new StreamScanner(engine, { direction: 'input', config: emailPolicy() });
    let max = 0;
    for (let i = 0; i < 300; i++) {
      await scanner.push(`chunk ${i} `.padEnd(4000, '.'));
      max = Math.max(max, scanner.buffered);
    }
    expect(scanner.received).toBe(1_200_000);
    expect(max).toBeLessThanOrEqual(2 * STREAM_WINDOW_CHARS + STREAM_MIN_SCAN_CHARS + 4000);
  });

  it('matches exact entries only at the end, on the whole text', async () => {
    const config = policyFixture({ denyList: { entries: ['drop table'], match_type: 'exact' } });
    expect((await streamText(['drop ', 'table'], config)).last.blocked).toBe(true);
    expect((await streamText(['drop table', ' users', '!'], config)).last.blocked).toBe(false);
  });

  it('an allow-list entry exempts only its own spans: detection goes on after it (issue #16)', async () => {
    const config = emailPolicy({ allowList: { entries: ['INTERNAL TEST'], match_type: 'contains' } });
    const text = `${'internal test '.repeat(100)}bob@corp.io ${'z'.repeat(3000)}`;
    const { findings, last } = await streamText(chunked(text, 700), config);
    expect(spansOf(text, findings)).toEqual(['bob@corp.io']);
    expect(last).toMatchObject({ allowListed: true, blocked: true, releasedUpTo: text.length });
  });

  it('scans nothing when the policy mode excludes the direction, releasing at once', async () => {
    const config = emailPolicy({ policyMode: 'O' });
    const scanner = new StreamScanner(engine, { direction: 'input', config });
    const update = await scanner.push('bob@corp.io '.repeat(100));
    expect(update).toMatchObject({ scanned: false, releasedUpTo: 1200, findings: [] });
    expect(await scanner.finish()).toMatchObject({ scanned: false, blocked: false, done: true });
  });

  it('reports a failing detector under fail-closed as a block, with its outcome', async () => {
    const broken: Detector = {
      type: 'pii/name',
      detect: () => {
        throw new Error('boom');
      },
    };
    const e = createDetectionEngine({ registry: registryOf([broken]) });
    const config = policyFixture({ inputDetectors: [{ detector_type: 'pii/name', threshold: 'L2', action: 'block' }] });
    const scanner = new StreamScanner(e, { direction: 'input', config, failMode: 'closed' });
    const update = await scanner.finish();
    expect(update.blocked).toBe(true);
    expect(update.outcomes).toEqual([expect.objectContaining({ type: 'pii/name', status: 'error' })]);
  });

  it('rejects an invalid configuration up front', () => {
    const config = policyFixture({ customDetectors: [{ name: 'bad', pattern: '(', action: 'block' }] });
    expect(() => new StreamScanner(engine, { direction: 'input', config })).toThrow('custom detector "bad"');
  });

  it('clamps the window', () => {
    expect([streamWindow(undefined), streamWindow(0), streamWindow(10), streamWindow(1e9), streamWindow(2048)]).toEqual([
      1024, 1024, 256, 16_384, 2048,
    ]);
  });
});

describe('StreamScanner.status: the answer to an acknowledged chunk that triggered no scan', () => {
  it('reports the running verdict and what was received, with no new findings and nothing newly released', async () => {
    const scanner = new StreamScanner(engine, { direction: 'input', config: emailPolicy(), windowChars: 256 });
    const head = `mail jane.doe@acme-corp.com ${'x'.repeat(STREAM_MIN_SCAN_CHARS + 600)}`;
    const scanned = await scanner.push(head);
    expect(scanned?.blocked).toBe(true);
    expect(await scanner.push('short')).toBeUndefined();
    const status = scanner.status();
    expect(status).toMatchObject({
      findings: [],
      newCategories: [],
      outcomes: [],
      received: head.length + 'short'.length,
      releasedUpTo: scanned!.releasedUpTo,
      blocked: true,
      categories: scanned!.categories,
      done: false,
    });
  });
});
