import { JsonStringUnescaper } from '../../../src/gateway/proxy/json-string-unescaper';

/** JSON text of `value` with every character of its strings written as a \u escape. */
function escapedJson(value: Record<string, string>): string {
  const esc = (s: string) => Array.from({ length: s.length }, (_, i) => `\\u${s.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
  return `{${Object.entries(value)
    .map(([k, v]) => `"${esc(k)}": "${esc(v)}"`)
    .join(', ')}}`;
}

function decode(pieces: string[]): string {
  const u = new JsonStringUnescaper();
  return pieces.map((p) => u.write(p)).join('') + u.end();
}

describe('incremental decoding of JSON string values (streamed tool-call arguments)', () => {
  const value = { card: '4556737586899855', note: 'caf\u00e9 \ud83d\ude00 "q" \\ /' };
  const doc = escapedJson(value);

  it('gives the text the tool receives: every string decoded, the structure as sent', () => {
    expect(JSON.parse(doc)).toEqual(value);
    expect(decode([doc])).toBe(`{"card": "4556737586899855", "note": "caf\u00e9 \ud83d\ude00 "q" \\ /"}`);
  });

  it('gives the same text however the document is split (inside escapes and surrogate pairs included)', () => {
    const whole = decode([doc]);
    for (let i = 0; i <= doc.length; i++) {
      expect(decode([doc.slice(0, i), doc.slice(i)])).toBe(whole);
    }
    expect(decode([...doc])).toBe(whole);
  });

  it('never returns half a surrogate pair from one write', () => {
    const u = new JsonStringUnescaper();
    expect(u.write('{"e":"\\ud83d')).toBe('{"e":"');
    expect(u.write('\\ude00"}')).toBe('\ud83d\ude00"}');
  });

  it('decodes the short escapes and passes invalid ones through as written', () => {
    expect(decode(['{"a":"x\\n\\t\\"\\\\\\/\\b\\f\\r y", "b":"\\q\\u12g4"}'])).toBe('{"a":"x\n\t"\\/\b\f\r y", "b":"\\q\\u12g4"}');
  });

  it('leaves text outside strings (and text that is not JSON) as sent, and flushes an unfinished escape at the end', () => {
    expect(decode(['{"n": 12, "t": true, "z": null}'])).toBe('{"n": 12, "t": true, "z": null}');
    expect(decode(['not json \\u0041 at all'])).toBe('not json \\u0041 at all');
    expect(decode(['{"a":"\\u00'])).toBe('{"a":"\\u00');
  });
});
