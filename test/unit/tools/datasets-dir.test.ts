import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The training and evaluation tools read labelled datasets that are not in the repository: in a clone,
 * `npm run eval:classifiers` (dist/tools/, built by `npm run build`) says what to pass instead of
 * failing on a path outside the repository.
 */
const ROOT = resolve(__dirname, '..', '..', '..');
const TOOL = join(ROOT, 'dist', 'tools', 'eval-classifiers.js');

describe('datasets directory of the classifier tools', () => {
  beforeAll(() => {
    if (!existsSync(TOOL)) throw new Error('dist/tools/ is missing: run `npm run build`');
  });
  const run = (args: string[], env: Record<string, string>) =>
    spawnSync(process.execPath, [TOOL, ...args], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });

  it('without --data or DATASETS_DIR: exit 1 and how to pass them', () => {
    const r = run([], {});
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^No datasets directory: pass --data <dir> .* or set DATASETS_DIR/);
    expect(r.stderr).not.toMatch(/\bat \w+ \(/); // no stack trace
  });

  it.each([
    [['--data', '/no/such/datasets'], {}, /Datasets directory \/no\/such\/datasets \(--data\) does not exist/],
    [[], { DATASETS_DIR: '/no/such/datasets' }, /Datasets directory \/no\/such\/datasets \(DATASETS_DIR\) does not exist/],
  ])('a missing directory (%j %j) is named', (args, env, message) => {
    const r = run(args, env as Record<string, string>);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
  });
});
