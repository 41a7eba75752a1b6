import { replaceResults } from '../../../tools/bench-onnx';

describe('bench:onnx report (bench/ONNX.md)', () => {
  const START = '<!-- bench:onnx results start -->';
  const END = '<!-- bench:onnx results end: the text outside the markers is written by hand and kept -->';

  it('replaces only the generated block and keeps the hand-written text around it', () => {
    const current = `# title\n\nintro by hand\n\n${START}\nold table\n${END}\n\n## Reading the numbers\nanalysis by hand\n`;
    const next = replaceResults(current, 'new table');
    expect(next).toBe(`# title\n\nintro by hand\n\n${START}\nnew table\n${END}\n\n## Reading the numbers\nanalysis by hand\n`);
  });

  it('appends the block to a file that has no markers yet', () => {
    expect(replaceResults('# title\n', 'table')).toBe(`# title\n\n${START}\ntable\n${END}\n`);
  });
});
