/**
 * A pattern that ends in an unbounded counted repetition (`[\p{L}]{64,}`, `(?:\.[0-9]+){3,}`) keeps one
 * backtrack entry per repetition: on a run of millions of characters (a 10 MB body allows it) irregexp runs
 * out of stack ("Maximum call stack size exceeded"). Such a pattern is written with a fixed count instead,
 * and its match continued here by a sticky pattern of the repeated unit with a bounded count
 * (`(?:\.[0-9]+){1,1024}`): the same match, since the unit is matched greedily either way.
 */

/** `m` with its text continued by as many matches of the sticky `unit` as follow it (bounded steps). */
export function continueMatch(text: string, m: RegExpExecArray, unit: RegExp): RegExpExecArray {
  const start = m.index + m[0].length;
  let end = start;
  for (;;) {
    unit.lastIndex = end;
    const more = unit.exec(text);
    if (!more || more[0].length === 0) break;
    end += more[0].length;
  }
  unit.lastIndex = 0;
  if (end > start) m[0] = text.slice(m.index, end);
  return m;
}
