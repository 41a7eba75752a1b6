import { EmailDetector } from '../../../src/detection/detectors/pii/email-detector';
import { createDetectionEngine, evaluate } from '../../../src/detection/engine';
import { defaultRegistry } from '../../../src/detection/registry';
import type { DetectResult } from '../../../src/shared/detection-client';
import { registryOf, spyDetector } from './detector-fixture';
import { policyFixture } from './policy-fixture';

/**
 * The engine scans every view of a text (normalized, canonical, decoded blobs), so formatting alone does
 * not hide an address or a deny-listed term; reported spans cover what the original text hides it in.
 */

const engine = createDetectionEngine({ registry: registryOf([new EmailDetector()]) });
const emailPolicy = policyFixture({ inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }] });
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

const spans = (text: string, result: DetectResult, type = 'pii/email') =>
  result.findings.filter((f) => f.type === type).map((f) => text.slice(f.start, f.end));

describe('engine: e-mail addresses hidden by formatting are found, with spans into the original', () => {
  const blob = b64('my email is jane@acme-corp.com');
  it.each([
    ['zero-width spaces', 'write to ja\u200Bne@acme\u200B-corp.com today', 'ja\u200Bne@acme\u200B-corp.com'],
    ['a bidi override and a tag character', 'write to jane@\u202Eacme-corp.com\u{E0041} today', 'jane@\u202Eacme-corp.com'],
    ['a Cyrillic "а" in the domain', 'write to jane@\u0430cme-corp.com today', 'jane@\u0430cme-corp.com'],
    ['Greek and Cyrillic look-alikes everywhere', 'write to j\u0430n\u0435@\u0430cm\u0435-c\u03BFrp.c\u043Em today', 'j\u0430n\u0435@\u0430cm\u0435-c\u03BFrp.c\u043Em'],
    ['full-width letters', 'write to ｊａｎｅ＠ａｃｍｅ-corp.com today', 'ｊａｎｅ＠ａｃｍｅ-corp.com'],
    ['[at] / [dot]', 'write to jane [at] acme-corp [dot] com today', 'jane [at] acme-corp [dot] com'],
    ['(at) / (dot)', 'write to jane(at)acme-corp(dot)com today', 'jane(at)acme-corp(dot)com'],
    ['bare at / dot words', 'write to jane at acme-corp dot com today', 'jane at acme-corp dot com'],
    ['bare at / dot words in odd case', 'write to jane aT acme-corp dOt com today', 'jane aT acme-corp dOt com'],
    ['bare at / dot words in capitals', 'write to jane AT acme-corp doT com today', 'jane AT acme-corp doT com'],
    ['base64', `payload ${blob} end`, blob],
    ['URL encoding', 'see %6A%61%6E%65%40%61%63%6D%65-corp.com now', '%6A%61%6E%65%40%61%63%6D%65-corp.com'],
    ['HTML decimal reference', 'mail jane&#64;acme-corp.com now', 'jane&#64;acme-corp.com'],
    ['HTML hex and named references', 'mail jane&#x40;acme-corp&period;com now', 'jane&#x40;acme-corp&period;com'],
    ['HTML5 named references beyond the common ones', 'mail j&omicron;hn&commat;acme-corp&period;c&omicron;m now', 'j&omicron;hn&commat;acme-corp&period;c&omicron;m'],
    ['hex', `blob ${Buffer.from('jane@acme-corp.com').toString('hex')} end`, Buffer.from('jane@acme-corp.com').toString('hex')],
    ['base64 of URL-encoded', `x ${b64('%6A%61%6E%65%40acme-corp.com')} y`, b64('%6A%61%6E%65%40acme-corp.com')],
  ])('%s', async (_name, text, expected) => {
    const result = await engine.evaluate({ text, direction: 'input', config: emailPolicy });
    expect(spans(text, result)).toEqual([expected]);
    expect(result.blocked).toBe(true);
    expect(result.categories).toEqual([{ type: 'pii/email', confidence: 0.95, action: 'block' }]);
  });

  it('an address seen in two views is one finding; distinct addresses stay distinct', async () => {
    const text = 'bob@corp.io, then jane&#64;acme-corp.com, then bob@corp.io';
    const result = await engine.evaluate({ text, direction: 'input', config: emailPolicy });
    expect(spans(text, result)).toEqual(['bob@corp.io', 'jane&#64;acme-corp.com', 'bob@corp.io']);
  });

  it('finds an address inside a JWT-like payload (base64url)', async () => {
    const payload = Buffer.from('{"sub":"42","email":"jane@acme-corp.com"}').toString('base64url');
    const token = `eyJhbGciOiJIUzI1NiJ9.${payload}.c2lnbmF0dXJl`;
    const text = `Authorization token: ${token}`;
    const result = await engine.evaluate({ text, direction: 'input', config: emailPolicy });
    expect(spans(text, result)).toEqual([payload]);
  });

  it('does not see addresses in innocent text', async () => {
    const text = 'look at example.com? meet at noon (at home). dot com era. sha da39a3ee5e6b4b0d3255bfef95601890afd80709 id getElementsByTagNameNS';
    const result = await engine.evaluate({ text, direction: 'input', config: emailPolicy });
    expect(result.findings).toEqual([]);
  });
});

describe('engine: deny list and custom detectors see through disguises', () => {
  const deny = policyFixture({ denyList: { entries: ['secret plan'], match_type: 'contains' } });

  it.each([
    ['confusables', 'the \u0455\u0435\u0441r\u0435t plan is ready', '\u0455\u0435\u0441r\u0435t plan'],
    ['zero-width and full-width', 'the ｓｅｃ\u200Bret plan', 'ｓｅｃ\u200Bret plan'],
    ['HTML references', 'the secret&nbsp;plan', 'secret&nbsp;plan'],
    ['base64', `the ${b64('our secret plan is here')} x`, b64('our secret plan is here')],
    ['hex', `the ${Buffer.from('the secret plan!').toString('hex')} x`, Buffer.from('the secret plan!').toString('hex')],
  ])('%s', async (_name, text, expected) => {
    const result = await engine.evaluate({ text, direction: 'input', config: deny });
    expect(result.blocked).toBe(true);
    expect(spans(text, result, 'deny_list')).toEqual([expected]);
  });

  it('a deny entry written with look-alikes also matches the plain word', async () => {
    const config = policyFixture({ denyList: { entries: ['\u0455\u0435cret'], match_type: 'contains' } });
    const result = await engine.evaluate({ text: 'a secret', direction: 'input', config });
    expect(result.blocked).toBe(true);
  });

  it('exact entries compare the whole text, never a decoded blob', async () => {
    const config = policyFixture({ denyList: { entries: ['drop table'], match_type: 'exact' } });
    const blobbed = await engine.evaluate({ text: `x ${b64('drop table')}`, direction: 'input', config });
    expect(blobbed.blocked).toBe(false);
    const folded = await engine.evaluate({ text: ' dr\u043Ep t\u0430ble ', direction: 'input', config });
    expect(folded.blocked).toBe(true);
  });

  it('custom detectors run on decoded text', async () => {
    const config = policyFixture({ customDetectors: [{ name: 'ticket', pattern: 'TCK-\\d+', action: 'alert' }] });
    const blob = b64('ticket TCK-1234 is open');
    const text = `see ${blob}`;
    const result = await engine.evaluate({ text, direction: 'input', config });
    expect(spans(text, result, 'custom/ticket')).toEqual([blob]);
  });

  it('the allow list is checked on the normalized text only (a blob cannot allow-list a text)', async () => {
    const config = policyFixture({
      allowList: { entries: ['internal test'], match_type: 'contains' },
      denyList: { entries: ['secret'], match_type: 'contains' },
    });
    const result = await engine.evaluate({ text: `${b64('internal test data')} secret`, direction: 'input', config });
    expect(result).toMatchObject({ allowListed: false, blocked: true });
  });
});

describe('engine: views and detectors', () => {
  it('runs a detector once per view and maps each view back', async () => {
    const spy = spyDetector('pii/name');
    const e = createDetectionEngine({ registry: registryOf([spy.detector]) });
    const config = policyFixture({ inputDetectors: [{ detector_type: 'pii/name', threshold: 'L2', action: 'log' }] });
    await e.evaluate({ text: 'plain text', direction: 'input', config });
    expect(spy.calls).toEqual(['plain text']);
    await e.evaluate({ text: `x&#64;y ${b64('hidden words here!')}`, direction: 'input', config });
    expect(spy.calls.slice(1)).toEqual([`x&#64;y ${b64('hidden words here!')}`, `x@y ${b64('hidden words here!')}`, 'hidden words here!']);
  });

  it('bounds the work: a text full of blobs is decoded into at most a text-sized view', async () => {
    const spy = spyDetector('pii/name');
    const e = createDetectionEngine({ registry: registryOf([spy.detector]) });
    const config = policyFixture({ inputDetectors: [{ detector_type: 'pii/name', threshold: 'L2', action: 'log' }] });
    const text = Array.from({ length: 5000 }, (_, i) => b64(`nested ${b64(`level two text ${i}`)}`)).join(' ');
    await e.evaluate({ text, direction: 'input', config });
    const scanned = spy.calls.reduce((n, c) => n + c.length, 0);
    expect(spy.calls.length).toBeLessThanOrEqual(6);
    expect(scanned).toBeLessThanOrEqual(text.length * 3);
  });
});

describe('engine (default registry): digits in other scripts reach the digit detectors', () => {
  const toArabicIndic = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0x660 + Number(d)));
  const cases = [
    ['pii/credit_card', `Please charge ${toArabicIndic('4119396707097582')} for the order.`, toArabicIndic('4119396707097582')],
    ['pii/credit_card', 'Please charge ４１１９ ３９６７ ０７０９ ７５８２ for the order.', '４１１９ ３９６７ ０７０９ ７５８２'],
    ['pii/us_social_security_number', `SSN: ${toArabicIndic('622-24-6549')}`, toArabicIndic('622-24-6549')],
  ] as const;
  it.each(cases)('%s in %j', async (type, text, expected) => {
    if (!defaultRegistry.has(type)) return; // detector not in this build
    const config = policyFixture({ inputDetectors: [{ detector_type: type, threshold: 'L3', action: 'block' }] });
    const result = await evaluate({ text, direction: 'input', config });
    expect(spans(text, result, type)).toEqual([expected]);
  });
});
