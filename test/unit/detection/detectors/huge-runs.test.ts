import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { CreditCardDetector } from '../../../../src/detection/detectors/pii/credit-card-detector';
import { IpAddressDetector } from '../../../../src/detection/detectors/pii/ip-address-detector';
import { PhoneNumberDetector } from '../../../../src/detection/detectors/pii/phone-number-detector';
import { DigitRunMatches, TextIndex } from '../../../../src/detection/text-index';
import { scanWith } from './numeric-scan';

/**
 * Digit runs of millions of characters (a 10 MB request body is allowed). The card, phone and IPv4 runs
 * used to end in an unbounded counted repetition (`(?:…){11,}`), which keeps one backtrack entry per
 * repetition: on ~5 million digits irregexp ran out of stack and the detector failed ("Maximum call
 * stack size exceeded"), which fails the request closed. They now match a fixed head and continue in
 * bounded steps (DigitRunMatches' `extend`).
 */
/**
 * The detectors run in the detection service's worker thread (a plain isolate); the test does the same
 * with the compiled build (`npm test` builds first): inside the test runner's module sandbox the regexp
 * stack limits differ (a `/[0-9]+/g` over 10 million digits overflowed there and nowhere else).
 */
function scanInWorker(): Promise<{ card: string[]; phone: boolean; ip: string[] }> {
  const dist = path.join(__dirname, '..', '..', '..', '..', 'dist', 'detection', 'detectors', 'pii');
  const source = `
    const { parentPort } = require('node:worker_threads');
    const { CreditCardDetector } = require(${JSON.stringify(path.join(dist, 'credit-card-detector.js'))});
    const { PhoneNumberDetector } = require(${JSON.stringify(path.join(dist, 'phone-number-detector.js'))});
    const { IpAddressDetector } = require(${JSON.stringify(path.join(dist, 'ip-address-detector.js'))});
    const wall = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
    const tail = ' card 4111 1111 1111 1111 call +1 (415) 555-0100 host 10.1.2.3';
    const digits = wall('1', 10000000) + tail;
    const dotted = wall('1.', 10000000) + '1' + tail;
    const scan = (d, text) => d.detect({ text, direction: 'input' }, new AbortController().signal).map((f) => text.slice(f.start, f.end));
    parentPort.postMessage({
      card: scan(new CreditCardDetector(), digits),
      phone: scan(new PhoneNumberDetector(), digits).some((m) => m.includes('555-0100')),
      ip: scan(new IpAddressDetector(), dotted),
    });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 12 } });
    worker.once('message', (m) => {
      resolve(m as { card: string[]; phone: boolean; ip: string[] });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe('signature detectors on huge digit runs', () => {
  const wall = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

  it('the card, phone and IP detectors scan 10 million digits / dotted digits and still find what follows (as the service runs them: in a worker thread)', async () => {
    const found = await scanInWorker();
    expect(found.card).toContain('4111 1111 1111 1111');
    expect(found.phone).toBe(true);
    expect(found.ip).toContain('10.1.2.3');
  });

  it('the same detectors in this process on a million digits', () => {
    const tail = ' card 4111 1111 1111 1111 call +1 (415) 555-0100 host 10.1.2.3';
    expect(scanWith(new CreditCardDetector(), `${wall('1', 1_000_000)}${tail}`).map((m) => m.match)).toContain('4111 1111 1111 1111');
    expect(scanWith(new PhoneNumberDetector(), `${wall('1', 1_000_000)}${tail}`).some((m) => m.match.includes('555-0100'))).toBe(true);
    expect(scanWith(new IpAddressDetector(), `${wall('1.', 1_000_000)}1${tail}`).map((m) => m.match)).toContain('10.1.2.3');
  });

  it('a continued match covers the whole run, as the unbounded pattern did', () => {
    const text = `x ${wall('1.', 9_001)}1 y`;
    const index = new TextIndex(text);
    const matches = new DigitRunMatches(index, /(?<![0-9.])[0-9]+(?:\.[0-9]+){3}/y, undefined, /(?:\.[0-9]+){1,1024}/y);
    const m = matches.next();
    expect(m?.index).toBe(2);
    expect(m?.[0]).toBe(text.slice(2, -2));
    expect(m?.[0]).toBe(/(?<![0-9.])[0-9]+(?:\.[0-9]+){3,}/.exec(text)?.[0]);
  });
});
