import {
  EMAIL_CONFIDENCE,
  EmailDetector,
  PLACEHOLDER_CONFIDENCE,
} from '../../../src/detection/detectors/pii/email-detector';

const detector = new EmailDetector();
const scan = (text: string) =>
  (detector.detect({ text, direction: 'input' }, new AbortController().signal) as ReturnType<EmailDetector['detect']>).map(
    (f) => ({ match: text.slice(f.start, f.end), confidence: f.confidence }),
  );

describe('EmailDetector', () => {
  it.each([
    ['contact alice@corp.io today', 'alice@corp.io'],
    ['first.last+tag@mail.company.co.uk', 'first.last+tag@mail.company.co.uk'],
    ['<john_doe-99@sub-domain.org>', 'john_doe-99@sub-domain.org'],
    ['Email: BOB.SMITH@ACME.COM.', 'BOB.SMITH@ACME.COM'],
    ['mailto:ops%team@corp.dev?subject=x', 'ops%team@corp.dev'],
    ['Reach me at bob@corp.com: I reply fast', 'bob@corp.com'],
    ['name@domain.museum', 'name@domain.museum'],
    ['idn@xn--bcher-kva.xn--p1ai', 'idn@xn--bcher-kva.xn--p1ai'],
    ['(carol@files.zip)', 'carol@files.zip'],
  ])('finds the address in %j', (text, expected) => {
    expect(scan(text)).toEqual([{ match: expected, confidence: EMAIL_CONFIDENCE }]);
  });

  it('finds every address, with spans into the text', () => {
    const text = 'a@b.com, c.d@e.net;f@g.org';
    expect(scan(text).map((m) => m.match)).toEqual(['a@b.com', 'c.d@e.net', 'f@g.org']);
  });

  it.each([
    ['user@example.com'],
    ['someone@mail.example.org'],
    ['x@example.net'],
    ['dev@app.test'],
    ['a@b.invalid'],
    ['me@host.localhost'],
  ])('scores the reserved placeholder %j lower', (text) => {
    expect(scan(text)).toEqual([{ match: text, confidence: PLACEHOLDER_CONFIDENCE }]);
  });

  it.each([
    ['git@github.com:org/repo.git'],
    ['clone user@gitlab.example.io:group/project.git now'],
    ['ssh root@server.corp.io:22'],
    ['ssh://git@github.com/org/repo.git'],
    ['<img src="icon@2x.png">'],
    ['logo@3x.webp and sprite@1.5x.jpg'],
    ['import x from "./lib@x.js"'],
    ['lodash@4.17.21'],
    ['npm i react@^18.2.0 @types/node@20.11.5'],
    ['pkg@1.2.beta'],
    ['pkg@v2.0.rc'],
    ['@Component({ selector: "app" })'],
    ['user@localhost'],
    ['foo@bar'],
    ['a@b.c'],
    ['name@domain.com1'],
    ['@media (max-width: 600px)'],
    ['x.@y.com has a trailing dot in the local part'],
  ])('does not report %j', (text) => {
    expect(scan(text)).toEqual([]);
  });

  it('finds every address of a text that holds hundreds of them apart from each other', () => {
    const addresses = Array.from({ length: 400 }, (_, i) => `user${i}.name@host${i}.corp-mail.com`);
    const text = addresses.map((a, i) => `line ${i}: please write to ${a} before friday.`).join('\n');
    expect(scan(text)).toEqual(addresses.map((match) => ({ match, confidence: EMAIL_CONFIDENCE })));
  });

  it('rejects an over-long local part', () => {
    expect(scan(`${'a'.repeat(65)}@corp.com`)).toEqual([]);
    expect(scan(`${'a'.repeat(64)}@corp.com`)).toHaveLength(1);
  });

  it('honours an aborted signal on large inputs', () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const text = 'a@b.com '.repeat(1000);
    expect(() => detector.detect({ text, direction: 'input' }, controller.signal)).toThrow('stop');
  });

  // Speed on this megabyte is measured by `npm run bench:adversarial`.
  it('keeps at most 1000 findings on 1 MB of addresses', () => {
    const text = 'x@corp.com '.repeat(100_000);
    const findings = detector.detect({ text, direction: 'output' }, new AbortController().signal) as Array<{ start: number; end: number }>;
    expect(findings).toHaveLength(1000);
    for (const f of findings) expect(text.slice(f.start, f.end)).toBe('x@corp.com');
  });
});
