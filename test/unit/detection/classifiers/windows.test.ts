import { splitWindows, windowSpans, WINDOW_OVERLAP, WINDOW_SIZE, WINDOW_SLACK } from '../../../../src/detection/classifiers/windows';

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
