import { FIELD_SEPARATOR, FieldLayout, joinFields, StreamFieldLayout, type TextField } from '../../../src/shared/explain/field-layout';

/** The field spans a joined-text span covers, the slow way (every field, every character). */
function bruteForce(fields: readonly TextField[], start: number, end: number) {
  const out: Array<{ path: string; start: number; end: number }> = [];
  let at = 0;
  for (const f of fields) {
    const from = Math.max(start, at);
    const to = Math.min(end, at + f.text.length);
    if (to > from) out.push({ path: f.path, start: from - at, end: to - at });
    at += f.text.length + FIELD_SEPARATOR.length;
  }
  return out;
}

describe('joinFields + locate', () => {
  const fields: TextField[] = [
    { path: 'messages[0].content', text: 'You are a helpful assistant.' },
    { path: 'messages[1].content[0].text', text: 'Hello, my mail is jane@acme.test' },
    { path: 'messages[1].content[1].text', text: 'x' },
    { path: 'tools[0].function.description', text: 'Looks things up.' },
  ];
  const { text, layout } = joinFields(fields);

  it('joins with the separator the detection text always used', () => {
    expect(text).toBe(fields.map((f) => f.text).join('\n\n'));
  });

  it('maps a span inside one field to that field, offsets within it', () => {
    const at = text.indexOf('jane@acme.test');
    const [span] = layout.locate(at, at + 'jane@acme.test'.length);
    expect(span).toEqual({ path: 'messages[1].content[0].text', start: 18, end: 32 });
    expect(fields[1]!.text.slice(span!.start, span!.end)).toBe('jane@acme.test');
  });

  it('splits a span that covers several fields (a classifier window) into one part per field', () => {
    expect(layout.locate(0, text.length)).toEqual(fields.map((f) => ({ path: f.path, start: 0, end: f.text.length })));
    const from = text.indexOf('assistant');
    const to = text.indexOf('my mail') + 2;
    expect(layout.locate(from, to)).toEqual([
      { path: 'messages[0].content', start: fields[0]!.text.indexOf('assistant'), end: fields[0]!.text.length },
      { path: 'messages[1].content[0].text', start: 0, end: 9 },
    ]);
  });

  it('reports a span inside a separator as an empty span at the end of the field before it', () => {
    const sep = fields[0]!.text.length;
    expect(layout.locate(sep, sep + 2)).toEqual([{ path: 'messages[0].content', start: sep, end: sep }]);
  });

  it('agrees with a brute-force mapping on many fields and spans', () => {
    const many: TextField[] = Array.from({ length: 200 }, (_, i) => ({ path: `messages[${i}].content`, text: 'ab'.repeat((i * 7) % 13) }));
    const joined = joinFields(many);
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let k = 0; k < 500; k++) {
      const a = rand(joined.text.length);
      const b = a + 1 + rand(40);
      const expected = bruteForce(many, a, b);
      if (expected.length > 0) expect(joined.layout.locate(a, b)).toEqual(expected);
    }
  });

  it('locates an empty span (a point) in the field that holds it', () => {
    const layout2 = new FieldLayout();
    layout2.append({ at: 0, length: 5, path: 'a', fieldStart: 0 });
    layout2.append({ at: 7, length: 5, path: 'b', fieldStart: 0 });
    expect(layout2.locate(8, 8)).toEqual([{ path: 'b', start: 1, end: 1 }]);
  });
});

describe('StreamFieldLayout', () => {
  it('maps stream offsets to the streamed field, counting each field across interleaved pieces', () => {
    const s = new StreamFieldLayout();
    s.push('choices[0].delta.content', 'Hello ');
    s.push('choices[0].delta.content', 'world. ');
    s.push('choices[0].delta.tool_calls[0].function.arguments', '{"q":');
    s.push('choices[0].delta.content', 'More text');
    s.push('choices[0].delta.tool_calls[0].function.arguments', '"x"}');
    // Stream: "Hello world. " + '{"q":' + "More text" + '"x"}'
    expect(s.locate(6, 11)).toEqual([{ path: 'choices[0].delta.content', start: 6, end: 11 }]);
    // "More" is content offset 13..17 (after "Hello world. ").
    expect(s.locate(18, 22)).toEqual([{ path: 'choices[0].delta.content', start: 13, end: 17 }]);
    // '"x"' is arguments offset 5..8.
    expect(s.locate(27, 30)).toEqual([{ path: 'choices[0].delta.tool_calls[0].function.arguments', start: 5, end: 8 }]);
    // A span over both content pieces and the arguments between them.
    expect(s.locate(10, 20)).toEqual([
      { path: 'choices[0].delta.content', start: 10, end: 13 },
      { path: 'choices[0].delta.tool_calls[0].function.arguments', start: 0, end: 5 },
      { path: 'choices[0].delta.content', start: 13, end: 15 },
    ]);
  });

  it('keeps one segment for a field streamed in many pieces', () => {
    const s = new StreamFieldLayout();
    for (let i = 0; i < 1000; i++) s.push('choices[0].delta.content', 'ab');
    expect(s.locate(1500, 1510)).toEqual([{ path: 'choices[0].delta.content', start: 1500, end: 1510 }]);
    expect(s.layout.last).toMatchObject({ at: 0, length: 2000 });
  });
});
