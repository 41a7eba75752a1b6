import { KEEP_MARKER, replaceSection, replaceTrafficSection } from '../../../tools/results-sections';

describe('bench:gateway rewriting its section of bench/RESULTS.md', () => {
  const generated = (n: number) => `## Traffic path (npm run bench:gateway)\n\n| run | ${n} |\n\n${KEEP_MARKER}\n`;
  const file = `# Benchmark results\n\nIntro.\n\n${generated(1)}Hand-written analysis.\n\nMore analysis.\n\n## Detection (signature stage)\n\nOther table.\n`;

  it('replaces the generated part and keeps the analysis below the marker and the other sections', () => {
    const next = replaceTrafficSection(file, generated(2));
    expect(next).toBe(`# Benchmark results\n\nIntro.\n\n${generated(2)}Hand-written analysis.\n\nMore analysis.\n\n## Detection (signature stage)\n\nOther table.\n`);
    expect(replaceTrafficSection(next, generated(1))).toBe(file);
  });

  it('appends the section to a file without one, and replaces a section without a marker whole', () => {
    expect(replaceTrafficSection('# Benchmark results\n', generated(3))).toBe(`# Benchmark results\n\n${generated(3)}`);
    const old = '## Traffic path (npm run bench:gateway)\n\nold table\n\n## Detection (signature stage)\n\nx\n';
    expect(replaceTrafficSection(old, generated(4))).toBe(`${generated(4)}\n## Detection (signature stage)\n\nx\n`);
  });

  it('rewrites another benchmark\'s section (its heading taken literally, parentheses included) and leaves the traffic section alone', () => {
    const heading = '## Start-up and memory (npm run bench:startup)';
    const MARK = '<!-- startup ends here -->';
    const startup = (n: number) => `${heading}\n\n| runs | ${n} |\n\n${MARK}\n`;
    const withBoth = `${file.trimEnd()}\n\n${startup(1)}Why.\n`;
    expect(replaceSection(withBoth, heading, MARK, startup(2))).toBe(`${file.trimEnd()}\n\n${startup(2)}Why.\n`);
    expect(replaceSection(file, heading, MARK, startup(3))).toBe(`${file.trimEnd()}\n\n${startup(3)}`);
  });
});
