/**
 * The traffic section of bench/RESULTS.md, rewritten by `npm run bench:gateway`: the generated part runs from
 * the heading to KEEP_MARKER; the analysis written by hand below the marker survives the next run.
 */

/** Ends the generated part of the section; the analysis written below it by hand survives the next run. */
export const KEEP_MARKER = '<!-- bench:gateway output ends here; the text below it is kept when the benchmark rewrites the section -->';

/**
 * Replaces the generated part of the "Traffic path" section of bench/RESULTS.md: from the heading to
 * KEEP_MARKER. What follows the marker up to the next section (the hand-written analysis) and the other
 * benchmarks' sections are kept.
 */
export function replaceTrafficSection(current: string, section: string): string {
  const re = /## Traffic path \(npm run bench:gateway\)[\s\S]*?(?=\n## |$)/;
  const old = re.exec(current);
  if (!old) return `${current.trimEnd()}\n\n${section.trimEnd()}\n`;
  const marker = old[0].indexOf(KEEP_MARKER);
  const kept = marker < 0 ? '' : old[0].slice(marker + KEEP_MARKER.length).replace(/^\n/, '');
  const replacement = `${section.trimEnd()}\n${kept ? `${kept.trimEnd()}\n` : ''}`;
  return current.slice(0, old.index) + replacement + current.slice(old.index + old[0].length);
}

