import { IP_CONFIDENCE, IpAddressDetector } from '../../../../src/detection/detectors/pii/ip-address-detector';
import { abortedSignal, scanWith, topConfidence } from './numeric-scan';

const detector = new IpAddressDetector();
const scan = (text: string) => scanWith(detector, text);
const top = (text: string) => topConfidence(detector, text);

describe('IpAddressDetector', () => {
  it.each([
    ['8.8.8.8', '8.8.8.8', IP_CONFIDENCE.public],
    ['server 8.8.8.8', '8.8.8.8', IP_CONFIDENCE.publicWithHint],
    ['http://93.184.216.34:8080/x', '93.184.216.34', IP_CONFIDENCE.publicWithHint],
    ['blocked 81.2.69.160.', '81.2.69.160', IP_CONFIDENCE.public],
    ['10.0.0.1', '10.0.0.1', IP_CONFIDENCE.private],
    ['ssh admin@10.0.0.1', '10.0.0.1', IP_CONFIDENCE.privateWithHint],
    ['192.168.1.20:5432', '192.168.1.20', IP_CONFIDENCE.privateWithHint],
    ['127.0.0.1', '127.0.0.1', IP_CONFIDENCE.special],
    ['192.0.2.146', '192.0.2.146', IP_CONFIDENCE.special],
    ['"typescript": "5.9.3.1"', '5.9.3.1', IP_CONFIDENCE.ambiguous],
    ['"serverIp": "5.9.3.1"', '5.9.3.1', IP_CONFIDENCE.publicWithHint],
    ['2001:4860:4860::8888', '2001:4860:4860::8888', IP_CONFIDENCE.public],
    ['[2606:4700::1111]:443', '2606:4700::1111', IP_CONFIDENCE.publicWithHint],
    ['2A03:2880:F10C:83:FACE:B00C:0:25DE', '2A03:2880:F10C:83:FACE:B00C:0:25DE', IP_CONFIDENCE.public],
    ['::ffff:8.8.4.4', '::ffff:8.8.4.4', IP_CONFIDENCE.public],
    ['fe80::1ff:fe23:4567:890a%eth0', 'fe80::1ff:fe23:4567:890a%eth0', IP_CONFIDENCE.privateWithHint],
    ['fd12:3456:789a:1::1', 'fd12:3456:789a:1::1', IP_CONFIDENCE.private],
    ['::1', '::1', IP_CONFIDENCE.special],
    ['2001:db8::1', '2001:db8::1', IP_CONFIDENCE.special],
  ])('scores %j', (text, expected, confidence) => {
    expect(scan(text).map((m) => [m.match, m.confidence])).toEqual([[expected, confidence]]);
  });

  it('sees full-width digits after NFKC', () => {
    expect(scan('IP ８.８.８.８').map((m) => m.match)).toEqual(['8.8.8.8']);
  });

  it.each([
    ['version 1.2.3.4'],
    ['v1.2.3.4'],
    ['release: 2.1.0.3'],
    ['upgrade to 4.2.1.7'],
    ['1.2.3.4-beta'],
    ['1.0.0.1+build.5'],
    ['[assembly: AssemblyVersion("1.0.0.0")]'],
    ['__version__ = "2.4.1.3"'],
    ['numpy==1.26.4.0'],
    ['Chrome/120.0.0.0 Safari/537.36'],
    ['docker image nginx:1.25.3.1'],
    ['See section 2.3.1.4'],
    ['OID 1.3.6.1.4.1.311.21.8'],
    ['1.2.3.4.5'],
    ['256.1.1.1'],
    ['01.02.03.04'],
    ['netmask 255.255.255.0'],
    ['12:30:45'],
    ['MAC 00:1A:2B:3C:4D:5E'],
    ['std::vector<int>'],
    ['Foo::Bar::baz()'],
    ['Abc::Def'],
    ['dead:beef:cafe:babe:1234:5678:9abc:def0'],
    ['a[1::2]'],
    ['sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824'],
    ['host-1.2.3.4.tar.gz'],
  ])('does not report %j at L3', (text) => {
    expect(top(text)).toBeLessThan(0.5);
  });

  it('reports an address once, not also as the IPv4 tail of an IPv6 literal', () => {
    expect(scan('from ::ffff:93.184.216.34 and 93.184.216.34').map((m) => m.match)).toEqual([
      '::ffff:93.184.216.34',
      '93.184.216.34',
    ]);
  });

  it('reports spans into the text', () => {
    const text = 'X-Forwarded-For: 81.2.69.160, 70.41.3.18';
    for (const m of scan(text)) expect(text.slice(m.start, m.end)).toBe(m.match);
    expect(scan(text)).toHaveLength(2);
  });

  it('honours an aborted signal', () => {
    expect(() => detector.detect({ text: '8.8.8.8 '.repeat(600), direction: 'input' }, abortedSignal('stop'))).toThrow('stop');
  });

  // Speed on these megabytes is measured by `npm run bench:adversarial`.
  it('keeps at most 1000 findings and finds no address in megabytes of dots and colons', () => {
    expect(scan('8.8.8.8 '.repeat(1500))).toHaveLength(1000);
    for (const unit of ['1.', ':', 'a:', '1::']) expect(scan(unit.repeat(Math.ceil((1 << 20) / unit.length)))).toEqual([]);
  });
});
