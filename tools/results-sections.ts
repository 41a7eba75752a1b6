import fs from 'node:fs';
import path from 'node:path';

/**
 * Sections of bench/RESULTS.md rewritten by the benchmarks (`npm run bench:gateway`, `npm run bench:perf`):
 * the generated part of a section runs from its heading to its keep marker; the analysis written by hand
 * below the marker survives the next run.
 */

/** Ends the generated part of the bench:gateway section; the analysis written below it by hand survives the next run. */
export const KEEP_MARKER = '<!-- bench:gateway output ends here; the text below it is kept when the benchmark rewrites the section -->';

const TRAFFIC_HEADING = '## Traffic path (npm run bench:gateway)';

/**
 * Replaces the generated part of the section that starts with `heading` (a whole `## ` line): from the
 * heading to `marker`. What follows the marker up to the next section (the hand-written analysis) and
 * the other sections are kept; a file without the section gets it appended.
 */
export function replaceSection(current: string, heading: string, marker: string, section: string): string {
  const escaped = heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`${escaped}[\\s\\S]*?(?=\\n## |$)`);
  const old = re.exec(current);
  if (!old) return `${current.trimEnd()}\n\n${section.trimEnd()}\n`;
  const at = old[0].indexOf(marker);
  const kept = at < 0 ? '' : old[0].slice(at + marker.length).replace(/^\n/, '');
  const replacement = `${section.trimEnd()}\n${kept ? `${kept.trimEnd()}\n` : ''}`;
  return current.slice(0, old.index) + replacement + current.slice(old.index + old[0].length);
}

/** The "Traffic path" section (bench:gateway), up to KEEP_MARKER. */
export function replaceTrafficSection(current: string, section: string): string {
  return replaceSection(current, TRAFFIC_HEADING, KEEP_MARKER, section);
}

/**
 * Replaces one benchmark's section of a results file (from its heading to the next `## ` heading), or appends it
 * when the file has none yet; the other sections are kept as they are.
 */
export function writeSection(file: string, title: string, section: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const existing = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmark results\n\n';
  const start = existing.indexOf(title);
  let next: string;
  if (start < 0) {
    next = `${existing.replace(/\n*$/, '\n\n')}${section}`;
  } else {
    const after = existing.indexOf('\n## ', start + title.length);
    next = existing.slice(0, start) + section + (after < 0 ? '' : existing.slice(after + 1));
  }
  fs.writeFileSync(file, next.endsWith('\n') ? next : `${next}\n`);
}
