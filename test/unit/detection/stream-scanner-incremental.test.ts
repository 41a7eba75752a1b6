import { CreditCardDetector } from '../../../src/detection/detectors/pii/credit-card-detector';
import { EmailDetector } from '../../../src/detection/detectors/pii/email-detector';
import { createDetectionEngine } from '../../../src/detection/engine';
import type { DetectionPolicy } from '../../../src/shared/policy';
import { registryOf } from './detector-fixture';
import { policyFixture } from './policy-fixture';
import { chunked, scanStream } from './stream-run';

/**
 * Incremental release (holdBackChars): text is released about H characters behind what arrived
 * instead of a whole window, never inside a token still arriving, and every character released has
 * been scanned, with a match that straddles the release point still reported (once) and blocking.
 */
const engine = createDetectionEngine({ registry: registryOf([new EmailDetector(), new CreditCardDetector()]) });
const policy = (extra: Partial<DetectionPolicy> = {}) =>
  policyFixture({
    inputDetectors: [
      { detector_type: 'pii/email', threshold: 'L2', action: 'block' },
      { detector_type: 'pii/credit_card', threshold: 'L2', action: 'block' },
    ],
    ...extra,
  });
const WINDOW = 256;
const HOLD = 64;

const run = (chunks: string[], config = policy(), holdBackChars: number | undefined = HOLD) =>
  scanStream(engine, chunks, { direction: 'input', config, windowChars: WINDOW, holdBackChars });

const prose = (n: number) => 'The garden is quiet in the morning and the roses open slowly. '.repeat(Math.ceil(n / 62)).slice(0, n);

describe('StreamScanner: incremental release', () => {
  it('releases an answer shorter than the window chunk by chunk, before its end (counted in release events)', async () => {
    const text = prose(200); // shorter than the window: without hold-back nothing is released before the end
    const chunks = chunked(text, 20);
    const { updates } = await run(chunks);
    const releasesBeforeEnd = updates.filter((u) => !u.done && u.releasedUpTo > 0);
    const distinct = new Set(releasesBeforeEnd.map((u) => u.releasedUpTo));
    expect(distinct.size).toBeGreaterThanOrEqual(5);
    for (const u of updates) if (!u.done) expect(u.releasedUpTo).toBeLessThanOrEqual(u.received - HOLD);

    const fullWindow = await run(chunks, policy(), 0);
    expect(fullWindow.updates.filter((u) => !u.done && u.releasedUpTo > 0)).toHaveLength(0); // today's behaviour, still the default
  });

  it('never releases a character of an e-mail address split across chunks before the scan that blocks it', async () => {
    const address = 'jane.doe@acme-corp.com';
    const text = `${prose(150)} write to ${address} soon. ${prose(150)}`;
    const at = text.indexOf(address);
    for (const size of [1, 3, 7, 16, 40]) {
      const { updates, findings, last } = await run(chunked(text, size));
      const firstBlocked = updates.findIndex((u) => u.blocked);
      expect(firstBlocked).toBeGreaterThanOrEqual(0);
      // Everything released before the update that blocks (from then on nothing is) ends before the address.
      for (const u of updates.slice(0, firstBlocked)) expect(u.releasedUpTo).toBeLessThanOrEqual(at);
      expect(updates.slice(0, firstBlocked).some((u) => u.releasedUpTo > 0)).toBe(true); // text before it did go out early
      expect(findings.map((f) => text.slice(f.start, f.end))).toEqual([address]);
      expect(last.blocked).toBe(true);
    }
  });

  it('holds a card number written in groups (several tokens, shorter than the hold-back) whole until it is scanned', async () => {
    const card = '4111 1111 1111 1111';
    const text = `${prose(120)} card ${card} thanks. ${prose(120)}`;
    const at = text.indexOf(card);
    for (const size of [1, 5, 9]) {
      const { updates, findings } = await run(chunked(text, size));
      const firstBlocked = updates.findIndex((u) => u.blocked);
      expect(firstBlocked).toBeGreaterThanOrEqual(0);
      for (const u of updates.slice(0, firstBlocked)) expect(u.releasedUpTo).toBeLessThanOrEqual(at);
      expect(findings.map((f) => text.slice(f.start, f.end))).toEqual([card]);
    }
  });

  it('never releases part of a token still arriving, however long (up to the window)', async () => {
    const token = `sk-${'a1B2c3D4'.repeat(20)}`; // 163 characters, longer than the hold-back
    const text = `${prose(100)} ${token} ${prose(100)}`;
    const at = text.indexOf(token);
    const { updates } = await run(chunked(text, 4));
    for (const u of updates) {
      if (u.done) continue;
      // A release point is before the token, or after it (once it arrived whole), never inside.
      expect(u.releasedUpTo <= at || u.releasedUpTo >= at + token.length).toBe(true);
      if (u.releasedUpTo > at) expect(u.received).toBeGreaterThan(at + token.length);
    }
  });

  it('reports, once, a match longer than the hold-back that straddles the release point, and blocks the rest', async () => {
    const phrase = Array.from({ length: 14 }, (_, i) => `secretword${i}`).join(' '); // ~165 characters, 14 tokens
    const text = `${prose(200)} ${phrase} ${prose(200)}`;
    const at = text.indexOf(phrase);
    const config = policy({ denyList: { entries: [phrase], match_type: 'contains' } });
    for (const size of [3, 11, 30]) {
      const { updates, findings, last } = await run(chunked(text, size), config);
      const denied = findings.filter((f) => f.type === 'deny_list');
      expect(denied).toHaveLength(1);
      expect(denied[0]!.start).toBe(at);
      const firstBlocked = updates.findIndex((u) => u.blocked);
      // Released before the block: at most the first hold-back's worth of the phrase; never its end.
      for (const u of updates.slice(0, firstBlocked)) expect(u.releasedUpTo).toBeLessThan(at + phrase.length);
      expect(last.blocked).toBe(true);
    }
  });

  it('reports exactly what a whole-text scan reports, at every chunk size', async () => {
    const parts = Array.from({ length: 40 }, (_, i) => `${'word '.repeat((i * 37) % 90)}user${i}@corp${i % 7}.io `);
    const big = parts.join('');
    const whole = await engine.evaluate({ text: big, direction: 'input', config: policy() });
    for (const size of [1, 7, 64, 255, 1000, 100_000]) {
      const { findings } = await run(chunked(big, size));
      expect(findings).toEqual(whole.findings);
    }
  });

  it('scans a bounded window per chunk: the characters scanned grow linearly with the stream, not quadratically', async () => {
    const scanned = async (chunks: number) => (await run(chunked(prose(24 * chunks), 24))).scanner.scannedChars;
    const [a, b] = [await scanned(200), await scanned(800)];
    // Per chunk at most the lookbehind, the held tail and the chunk.
    expect(b).toBeLessThanOrEqual(800 * (WINDOW + WINDOW + 24));
    // Four times the text, about four times the work (a rescan of everything per chunk: sixteen times).
    expect(b / a).toBeGreaterThan(3);
    expect(b / a).toBeLessThan(4.5);
  });
});
