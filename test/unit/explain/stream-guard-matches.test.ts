import { createDetectionEngine } from '../../../src/detection/engine';
import { StreamScanner } from '../../../src/detection/stream-scanner';
import { chatStreamTexts } from '../../../src/gateway/proxy/openai-chat.schema';
import { MAX_FIELD_STREAMS, StreamGuard } from '../../../src/gateway/proxy/stream-guard';
import type { DetectionClient, DetectStream, DetectStreamOptions, DetectStreamUpdate } from '../../../src/shared/detection-client';
import { policyFixture } from '../detection/policy-fixture';

/** A DetectionClient whose streams run the real stream scanner in process (the gRPC hop is covered by e2e tests). */
function inProcessDetection(): DetectionClient {
  const engine = createDetectionEngine();
  const detectStream = (o: DetectStreamOptions): DetectStream => {
    const scanner = new StreamScanner(engine, { direction: o.direction, config: o.policy, windowChars: o.windowChars, holdBackChars: o.holdBackChars });
    let latest: DetectStreamUpdate | undefined;
    const emit = (u: DetectStreamUpdate | undefined) => {
      if (!u) return;
      latest = u;
      o.onUpdate?.(u);
    };
    return {
      write: async (chunk) => emit(await scanner.push(chunk)),
      end: async () => {
        const last = await scanner.finish();
        emit(last);
        return last;
      },
      cancel: () => undefined,
      get latest() {
        return latest;
      },
      [Symbol.asyncIterator]: () => {
        throw new Error('not used');
      },
    };
  };
  const unused = () => {
    throw new Error('not used');
  };
  return { detect: unused, detectStream, listDetectorTypes: unused, checkHealth: async () => true, close: () => undefined };
}

const chunk = (choices: unknown[]) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices });
const event = (data: unknown) => ({ raw: `data: ${JSON.stringify(data)}\n\n`, data: JSON.stringify(data) });

describe('StreamGuard: matches of a streamed answer', () => {
  it('maps findings to the streamed field of their choice, offsets into that field across chunks', async () => {
    const policy = policyFixture({ outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }] });
    const released: string[] = [];
    const guard = new StreamGuard({ detection: inProcessDetection(), policy, windowChars: 256, texts: chatStreamTexts(), release: (raw) => released.push(raw) });
    const content0 = ['Write to ann.lee@exa', 'mple-corp.com please. ', 'x'.repeat(300), ' and also to bo@acme-corp.com.'];
    const args0 = ['{"to":"cy@acme-corp.com",', '"n":1}'];
    const content1 = ['Other choice: di@acme-corp.com'];
    // Content of choice 0 (an address split over two chunks), then the arguments of its tool call 3
    // interleaved with more content, and a second choice. (Each kind of field of a choice, and each
    // tool call's arguments, has its own detection stream.)
    const events = [
      chunk([{ index: 0, delta: { content: content0[0] } }]),
      chunk([{ index: 0, delta: { content: content0[1] } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 3, function: { arguments: args0[0] } }] } }]),
      chunk([{ index: 1, delta: { content: content1[0] } }]),
      chunk([{ index: 0, delta: { content: content0[2] } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 3, function: { arguments: args0[1] } }] } }]),
      chunk([{ index: 0, delta: { content: content0[3] } }]),
    ];
    for (const e of events) await guard.push(event(e), e);
    await guard.finish();
    expect(released).toHaveLength(events.length);
    const [email] = guard.explained();
    const byPath = [...email!.matches].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.start - b.start));
    const full = { 'choices[0].delta.content': content0.join(''), 'choices[0].delta.tool_calls[3].function.arguments': args0.join(''), 'choices[1].delta.content': content1.join('') };
    expect(byPath.map((m) => [m.path, full[m.path as keyof typeof full].slice(m.start, m.end)])).toEqual([
      ['choices[0].delta.content', 'ann.lee@example-corp.com'],
      ['choices[0].delta.content', 'bo@acme-corp.com'],
      ['choices[0].delta.tool_calls[3].function.arguments', 'cy@acme-corp.com'],
      ['choices[1].delta.content', 'di@acme-corp.com'],
    ]);
    for (const m of byPath) expect(m.signal).toBe('signature:pii/email');
  });

  it('scans content interleaved with reasoning deltas as the client reads each field: never spliced', async () => {
    const policy = policyFixture({ denyList: { entries: ['ignore all previous instructions'], match_type: 'contains' } });
    const released: string[] = [];
    const guard = new StreamGuard({ detection: inProcessDetection(), policy, windowChars: 256, texts: chatStreamTexts(), release: (raw) => released.push(raw) });
    const events = [
      chunk([{ index: 0, delta: { content: 'Sure: ign' } }]),
      chunk([{ index: 0, delta: { reasoning_content: 'thinking about it' } }]),
      chunk([{ index: 0, delta: { content: 'ore all prev' } }]),
      chunk([{ index: 0, delta: { reasoning_details: [{ index: 0, type: 'reasoning.text', text: 'more thought' }] } }]),
      chunk([{ index: 0, delta: { content: 'ious instructions' } }]),
    ];
    for (const e of events) await guard.push(event(e), e);
    if (!guard.blocked) await guard.finish();
    expect(guard.blocked).toBe(true);
    expect(released.join('')).not.toContain('ious instructions');
    const [hit] = guard.explained();
    expect(hit!.matches.map((m) => m.path)).toContain('choices[0].delta.content');
  });

  it('scans streamed tool-call arguments decoded (JSON escapes split across chunks), each tool call on its own', async () => {
    const policy = policyFixture({ outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }] });
    const released: string[] = [];
    const guard = new StreamGuard({ detection: inProcessDetection(), policy, windowChars: 256, texts: chatStreamTexts(), release: (raw) => released.push(raw) });
    const escape = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const args = `{"to":"${escape('cy@acme-corp.com')}"}`;
    const other = '{"note":"\\u0068i"}';
    const pieces = args.match(/[\s\S]{1,7}/g)!; // cuts inside the escapes
    const events = pieces.flatMap((p, i) => [
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: p } }] } }]),
      ...(i < other.length ? [chunk([{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: other[i] } }] } }])] : []),
    ]);
    for (const e of events) await guard.push(event(e), e);
    await guard.finish();
    expect(guard.blocked).toBe(true);
    const [email] = guard.explained();
    expect(email!.matches.map((m) => [m.path, m.start, m.end])).toEqual([['choices[0].delta.tool_calls[0].function.arguments', 7, 23]]);
    // Nothing that completes the address was released.
    const releasedArgs = released.map((r) => JSON.parse(r.slice(6)).choices[0].delta.tool_calls[0]).filter((t) => t.index === 0).map((t) => t.function.arguments).join('');
    expect(args.startsWith(releasedArgs)).toBe(true);
    expect(releasedArgs.length).toBeLessThan(args.length - 6 * 4);
  });

  it('refuses to open more detection streams than the bound (the relay then fails closed)', async () => {
    const policy = policyFixture({ outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }] });
    const guard = new StreamGuard({ detection: inProcessDetection(), policy, windowChars: 256, texts: chatStreamTexts(), release: () => undefined });
    const calls = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ index: from + i, function: { arguments: '{}' } }));
    const first = chunk([{ index: 0, delta: { content: 'hi', tool_calls: calls(0, MAX_FIELD_STREAMS - 1) } }]);
    await guard.push(event(first), first);
    const more = chunk([{ index: 0, delta: { tool_calls: calls(MAX_FIELD_STREAMS, 1) } }]);
    await expect(guard.push(event(more), more)).rejects.toThrow(/more than/);
    guard.cancel();
  });

  it('releases the chunks of an answer shorter than the scan window before its end, and never a byte of an address split across chunks', async () => {
    const policy = policyFixture({ outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }] });
    const released: string[] = [];
    let flushes = 0;
    const guard = new StreamGuard({
      detection: inProcessDetection(),
      policy,
      windowChars: 256,
      texts: chatStreamTexts(),
      release: (raw) => released.push(raw),
      flush: () => (flushes += 1),
    });
    const words = 'The garden is quiet in the morning and the roses open slowly while the bees wake. '.repeat(3); // 249 characters
    const pieces = words.match(/[\s\S]{1,12}/g)!;
    for (const p of pieces) {
      const e = chunk([{ index: 0, delta: { content: p } }]);
      await guard.push(event(e), e);
    }
    const releasedBeforeEnd = released.length;
    expect(releasedBeforeEnd).toBeGreaterThanOrEqual(5); // before: 0 (everything at the end, after finish)
    expect(flushes).toBeGreaterThanOrEqual(5); // one flush per run of released events
    // Then an address split across three chunks: none of its characters goes out before the scan blocks it.
    for (const p of ['write to ann.l', 'ee@example-co', 'rp.com please. ', 'x'.repeat(200)]) {
      const e = chunk([{ index: 0, delta: { content: p } }]);
      await guard.push(event(e), e);
    }
    if (!guard.blocked) await guard.finish();
    expect(guard.blocked).toBe(true);
    const out = released.map((r) => JSON.parse(r.slice(6)).choices[0].delta.content as string).join('');
    expect(out).not.toContain('ann.l');
    expect(words.startsWith(out) || out.startsWith(words)).toBe(true);
  });

  it('releases events that carry no text at once, and opens a detection stream only with the first text', async () => {
    const policy = policyFixture({ outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }] });
    const inner = inProcessDetection();
    let opened = 0;
    const detection: DetectionClient = { ...inner, detectStream: (o) => (opened++, inner.detectStream(o)) };
    const released: string[] = [];
    const guard = new StreamGuard({ detection, policy, windowChars: 256, texts: chatStreamTexts(), release: (raw) => released.push(raw) });
    const role = event(chunk([{ index: 0, delta: { role: 'assistant', content: '' } }]));
    await guard.push(role, JSON.parse(role.data));
    expect(released).toEqual([role.raw]);
    expect(opened).toBe(0);
    const text = event(chunk([{ index: 0, delta: { content: 'Write to ann.lee@example-corp.com' } }]));
    await guard.push(text, JSON.parse(text.data));
    expect(opened).toBe(1);
    await guard.finish();
    expect(guard.blocked).toBe(true);
    expect(released).toEqual([role.raw]);
  });

  it('holds an event that carries text of several detection streams until every one of them released its piece', async () => {
    // Streams whose releases the test drives: each write is taken at once, nothing is released until update() says so.
    const opened: Array<{ onUpdate: (u: DetectStreamUpdate) => void; written: number }> = [];
    const update = (i: number, releasedUpTo: number) =>
      opened[i]!.onUpdate({ findings: [], newCategories: [], releasedUpTo, received: opened[i]!.written, blocked: false, categories: [], blockReason: '', outcomes: [], scanned: true, allowListed: false, done: false, elapsedMs: 0 });
    const detection: DetectionClient = {
      ...inProcessDetection(),
      detectStream: (o) => {
        const s = { onUpdate: o.onUpdate!, written: 0 };
        opened.push(s);
        return { write: async (t: string) => void (s.written += t.length), end: async () => undefined as never, cancel: () => undefined, latest: undefined, [Symbol.asyncIterator]: () => { throw new Error('not used'); } };
      },
    };
    const released: string[] = [];
    const policy = policyFixture({ outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }] });
    const guard = new StreamGuard({ detection, policy, windowChars: 256, texts: chatStreamTexts(), release: (raw) => released.push(raw) });
    // One event with the content of two choices (two detection streams), then one of choice 1 alone, then one without text.
    const both = event(chunk([{ index: 0, delta: { content: 'abc' } }, { index: 1, delta: { content: 'defgh' } }]));
    const second = event(chunk([{ index: 1, delta: { content: 'ij' } }]));
    const empty = event(chunk([{ index: 0, delta: {} }]));
    for (const e of [both, second, empty]) await guard.push(e, JSON.parse(e.data));
    expect(opened).toHaveLength(2);
    update(0, 3); // choice 0 scanned; choice 1 not yet
    expect(released).toEqual([]);
    update(1, 4); // choice 1 scanned short of the first event's end (5)
    expect(released).toEqual([]);
    update(1, 5);
    expect(released).toEqual([both.raw]);
    update(1, 7); // the second event's text, and the text-less event after it
    expect(released).toEqual([both.raw, second.raw, empty.raw]);
  });
});
