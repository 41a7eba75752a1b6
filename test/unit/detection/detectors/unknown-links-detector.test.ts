import { parse } from 'tldts';
import { SHORTENER_DOMAINS } from '../../../../src/detection/detectors/links/lists/link-lists';
import { WELL_KNOWN_DOMAINS } from '../../../../src/detection/detectors/links/lists/well-known-domains';
import { editDistance, imitatedBrand } from '../../../../src/detection/detectors/links/lookalike';
import { UnknownLinksDetector } from '../../../../src/detection/detectors/links/unknown-links-detector';

const detector = new UnknownLinksDetector();
const scanWith = (d: UnknownLinksDetector, text: string) =>
  d
    .detect({ text, direction: 'input' }, new AbortController().signal)
    .map((f) => ({ match: text.slice(f.start, f.end), confidence: f.confidence }));
const scan = (text: string) => scanWith(detector, text);

describe('well-known domain list', () => {
  it('holds about 1,000 unique registrable domains', () => {
    expect(WELL_KNOWN_DOMAINS.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(WELL_KNOWN_DOMAINS).size).toBe(WELL_KNOWN_DOMAINS.length);
    for (const d of WELL_KNOWN_DOMAINS) {
      // Registrable under the ICANN section (github.com), under the private section (webpack.js.org),
      // or a private suffix itself, which trusts the whole platform (githubusercontent.com).
      const icann = parse(d);
      const hosted = parse(d, { allowPrivateDomains: true });
      const registrable = (icann.isIcann === true && icann.domain === d) || hosted.domain === d || hosted.publicSuffix === d;
      expect({ d, registrable }).toEqual({ d, registrable: true });
    }
  });

  it('never lists a shortener as well known', () => {
    const wellKnown = new Set(WELL_KNOWN_DOMAINS);
    expect(SHORTENER_DOMAINS.filter((d) => wellKnown.has(d))).toEqual([]);
  });
});

describe('UnknownLinksDetector', () => {
  it.each([
    ['Click https://evil-domain.xyz/login now', 'https://evil-domain.xyz/login', 0.85],
    ['see http://invoice-portal-secure.com/view?id=1.', 'http://invoice-portal-secure.com/view?id=1', 0.8],
    ['visit www.cheap-meds-online.net today', 'www.cheap-meds-online.net', 0.8],
    ['Check out evil-domain.xyz/path for details', 'evil-domain.xyz/path', 0.85],
    ['Our partner site is acme-widgets.io', 'acme-widgets.io', 0.8],
    ['(source: https://research-notes.org/a_(b).pdf)', 'https://research-notes.org/a_(b).pdf', 0.8],
    ['[x](https://weird-site.club/x)', 'https://weird-site.club/x', 0.8],
  ])('reports the unknown link in %j', (text, match, confidence) => {
    expect(scan(text)).toEqual([{ match, confidence }]);
  });

  it.each([
    ['https://g00gle.com/accounts', 0.95],
    ['https://paypa1.com/resolve', 0.95],
    ['https://rnicrosoft.com/update', 0.95],
    ['https://secure-paypal-login.com/reset', 0.95],
    ['http://paypal.com.account-verify.io/signin', 0.95],
    ['https://xn--pple-43d.com/', 0.97],
    ['https://bit.ly/3xYzAbC', 0.9],
    ['t.co/abc123', 0.9],
    ['http://203.0.113.7:8080/x', 0.92],
    ['http://[2001:db8::1]/', 0.92],
    ['http://2130706433/', 0.95],
    ['http://10.0.0.12:9000/metrics', 0.8],
    ['https://google.com@evil.example-login.com/', 0.95],
  ])('scores %j as a look-alike, shortener or IP host', (text, confidence) => {
    expect(scan(text).map((f) => f.confidence)).toEqual([confidence]);
  });

  it('scores a plain unknown domain below look-alikes, shorteners and IP hosts', () => {
    const plain = scan('https://plain-unknown.com')[0]?.confidence ?? 0;
    for (const risky of ['https://g00gle.com', 'https://bit.ly/x', 'http://203.0.113.7/', 'https://xn--80ak6aa92e.com']) {
      expect(scan(risky)[0]?.confidence ?? 0).toBeGreaterThan(plain);
    }
    expect(plain).toBe(0.8);
  });

  it.each([
    ['See https://docs.python.org/3/library/re.html'],
    ['Clone https://github.com/nodejs/node.git'],
    ['https://en.wikipedia.org/wiki/URL and https://learn.microsoft.com/en-us/'],
    ['Data from https://www.census.gov/data.html and https://cs50.harvard.edu/x/'],
    ['Open the README.md file, run python main.py, then ./install.sh'],
    ['Edit config.yaml, package.json and index.js'],
    ['Unzip archive.zip; play clip.mov; lib.rs; backup.pl'],
    ['Contact john.smith@acme-corp.com or first.name@corp.io'],
    ['console.log(user.name, item.id, obj.data); self.app = app'],
    ['e.g. this, i.e. that, U.S.A., 3 p.m.'],
    ['We use Node.js, ASP.NET and System.IO'],
    ['version 1.2.3, pi is 3.14159, server 192.168.1.10'],
    ['http://localhost:3000 and https://example.com/api and http://myapp.test/'],
    ['git@github.com:org/repo.git'],
    ['Hello World.This sentence lacks a space.'],
  ])('does not report %j', (text) => {
    expect(scan(text)).toEqual([]);
  });

  it('reports a loopback URL below L3', () => {
    expect(scan('Open http://127.0.0.1:8080/health')).toEqual([{ match: 'http://127.0.0.1:8080/health', confidence: 0.4 }]);
  });

  it('treats user-content hosting subdomains as their own (unknown) domains', () => {
    expect(scan('https://someone.github.io/x').map((f) => f.confidence)).toEqual([0.8]);
    expect(scan('https://docs.github.com/en')).toEqual([]);
  });

  it('skips allowed domains and their subdomains', () => {
    const allowing = new UnknownLinksDetector({ allowedDomains: ['corp-intranet.com', '*.partner.io'] });
    const text = 'https://wiki.corp-intranet.com/x https://api.partner.io https://other-site.com';
    expect(scanWith(allowing, text).map((f) => f.match)).toEqual(['https://other-site.com']);
  });

  it('finds brand imitations with bounded edit distance', () => {
    expect(editDistance('paypal', 'paypa', 1)).toBe(1);
    expect(editDistance('netflix', 'netfilx', 1)).toBe(1);
    expect(editDistance('abcdef', 'uvwxyz', 2)).toBe(3);
    expect(imitatedBrand('g00gle')).toBe('google');
    expect(imitatedBrand('appleid-verify')).toBe('apple');
    expect(imitatedBrand('weather-forecast')).toBeNull();
  });

  it('honours an aborted signal', () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    expect(() => detector.detect({ text: 'a.bc '.repeat(2000), direction: 'input' }, controller.signal)).toThrow('stop');
  });

  it('keeps at most 1000 findings on a large input', () => {
    const text = 'https://evil-domain.xyz/a '.repeat(3000);
    expect(detector.detect({ text, direction: 'input' }, new AbortController().signal)).toHaveLength(1000);
  });
});
