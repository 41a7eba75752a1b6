import { alignedWindowSpans, splitWindows, windowSpans, WINDOW_OVERLAP, WINDOW_SIZE, WINDOW_SLACK } from '../../../../src/detection/classifiers/windows';

describe('classifier windows', () => {
  it('a short text is one window', () => {
    expect(windowSpans(0)).toEqual([{ start: 0, end: 0 }]);
    expect(windowSpans(WINDOW_SIZE)).toEqual([{ start: 0, end: WINDOW_SIZE }]);
  });

  it('covers a 100 KB text with full-size overlapping windows, the last aligned to the end', () => {
    const n = 100 * 1024;
    const spans = windowSpans(n);
    expect(spans).toHaveLength(Math.ceil((n - WINDOW_OVERLAP) / (WINDOW_SIZE - WINDOW_OVERLAP)));
    expect(spans[0]).toEqual({ start: 0, end: WINDOW_SIZE });
    expect(spans[spans.length - 1]).toEqual({ start: n - WINDOW_SIZE, end: n });
    for (const s of spans) expect(s.end - s.start).toBe(WINDOW_SIZE);
    for (let i = 1; i < spans.length; i++) {
      // consecutive windows overlap by at least WINDOW_OVERLAP: nothing is skipped
      expect((spans[i - 1]?.end ?? 0) - (spans[i]?.start ?? 0)).toBeGreaterThanOrEqual(WINDOW_OVERLAP);
    }
  });

  it('grows linearly with the text', () => {
    expect(windowSpans(1_000_000).length / windowSpans(100_000).length).toBeCloseTo(10, 0);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(3000); // 6000 UTF-16 units
    for (const w of splitWindows(text)) {
      expect(w.text.charCodeAt(0)).toBeGreaterThanOrEqual(0xd800);
      expect(w.text.charCodeAt(0)).toBeLessThan(0xdc00);
      expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(w.text)).toBe(false);
    }
  });

  it('rejects an overlap that is not smaller than the window', () => {
    expect(() => windowSpans(10_000, undefined, { size: 100, overlap: 100 })).toThrow();
  });
});

describe('classifier windows: short tails', () => {
  it('absorbs a tail of at most WINDOW_SLACK units into the window before it', () => {
    expect(windowSpans(2048)).toEqual([{ start: 0, end: 2048 }]);
    expect(windowSpans(WINDOW_SIZE + WINDOW_SLACK)).toEqual([{ start: 0, end: WINDOW_SIZE + WINDOW_SLACK }]);
    expect(windowSpans(WINDOW_SIZE + WINDOW_SLACK + 1)).toEqual([
      { start: 0, end: WINDOW_SIZE },
      { start: WINDOW_SLACK + 1, end: WINDOW_SIZE + WINDOW_SLACK + 1 },
    ]);
    const step = WINDOW_SIZE - WINDOW_OVERLAP;
    const n = step + WINDOW_SIZE + 100; // the third window would add 100 units
    expect(windowSpans(n)).toEqual([
      { start: 0, end: WINDOW_SIZE },
      { start: step, end: n },
    ]);
  });

  it('covers every unit with windows of at most WINDOW_SIZE + WINDOW_SLACK', () => {
    for (let n = 1; n < 12_000; n += 37) {
      const spans = windowSpans(n);
      expect(spans[0]?.start).toBe(0);
      expect(spans[spans.length - 1]?.end).toBe(n);
      for (const s of spans) expect(s.end - s.start).toBeLessThanOrEqual(WINDOW_SIZE + WINDOW_SLACK);
      for (let i = 1; i < spans.length; i++) expect((spans[i - 1]?.end ?? 0) - (spans[i]?.start ?? 0)).toBeGreaterThanOrEqual(WINDOW_OVERLAP);
    }
  });
});

describe('classifier windows aligned with the view a text was derived from', () => {
  /** ~60 KB of distinct words, so every window's text is different. */
  const base = Array.from({ length: 9000 }, (_, i) => `word${i}`).join(' ');
  /** `base` with a few local edits, as canonicalisation makes them (shorter and longer replacements). */
  const edited = base.replace('word100 ', 'w&amp;100 ').replace('word20000', 'X').replace('word5000 ', 'word5000%20more ').replace('word8500', 'w');

  function coverage(text: string, spans: Array<{ start: number; end: number }>) {
    expect(spans[0]?.start).toBe(0);
    expect(spans[spans.length - 1]?.end).toBe(text.length);
    for (let i = 1; i < spans.length; i++) {
      const prev = spans[i - 1] as { start: number; end: number };
      const cur = spans[i] as { start: number; end: number };
      expect(cur.start).toBeGreaterThan(prev.start);
      expect(prev.end - cur.start).toBeGreaterThanOrEqual(WINDOW_OVERLAP);
    }
  }

  it('windows the edits did not touch have exactly the base windows’ text; only the edited ones differ', () => {
    const baseTexts = new Set(windowSpans(base.length, base).map((w) => base.slice(w.start, w.end)));
    const spans = alignedWindowSpans(edited, base);
    coverage(edited, spans);
    const fresh = spans.filter((w) => !baseTexts.has(edited.slice(w.start, w.end)));
    // 3 edits in the text (one pattern does not occur), each in one window or in the overlap of two.
    expect(fresh.length).toBeGreaterThanOrEqual(3);
    expect(fresh.length).toBeLessThanOrEqual(6);
    expect(spans.length).toBe(windowSpans(base.length, base).length);
    // Without alignment nearly every window after the first edit would differ.
    const unaligned = windowSpans(edited.length, edited).filter((w) => !baseTexts.has(edited.slice(w.start, w.end)));
    expect(unaligned.length).toBeGreaterThan(25);
  });

  it('an identical text gets the base windows, a short text one window', () => {
    expect(alignedWindowSpans(base, base)).toEqual(windowSpans(base.length, base));
    expect(alignedWindowSpans('short text', base)).toEqual([{ start: 0, end: 10 }]);
  });

  it('still covers the whole text with full overlaps when nothing can be aligned', () => {
    const other = 'x'.repeat(7000) + Array.from({ length: 3000 }, (_, i) => `q${i}`).join(' ');
    for (const [text, against] of [
      [other, base],
      [base, other],
      [base.slice(0, 20_000), base],
      [base, base.slice(0, 20_000)],
    ] as const) {
      const spans = alignedWindowSpans(text, against);
      coverage(text, spans);
      for (const w of spans) expect(w.end - w.start).toBeLessThanOrEqual(WINDOW_SIZE + WINDOW_SLACK + WINDOW_OVERLAP);
    }
  });
});
