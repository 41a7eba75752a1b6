import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * scripts/build.js isStale(): what `npm start` (scripts/start.js) checks before running dist/main.js, so
 * an edited src/ is compiled first instead of running stale code. Plain JavaScript (it runs before
 * anything is compiled), required as is.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { isStale } = require('../../../scripts/build.js') as { isStale(root?: string): string | undefined };

describe('scripts/build.js isStale', () => {
  let root: string;
  const at = (path: string, seconds: number) => utimesSync(path, seconds, seconds);
  const T = 1_700_000_000;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'build-stale-'));
    mkdirSync(join(root, 'src', 'detection'), { recursive: true });
    mkdirSync(join(root, 'tools'));
    mkdirSync(join(root, 'dist'));
    for (const f of ['src/main.ts', 'src/detection/engine.ts', 'tools/bench-detect.ts', 'tsconfig.json', 'tsconfig.build.json', 'dist/main.js', 'dist/.build-stamp']) {
      writeFileSync(join(root, f), 'x');
    }
    for (const p of ['src/main.ts', 'src/detection/engine.ts', 'src/detection', 'src', 'tools/bench-detect.ts', 'tools', 'tsconfig.json', 'tsconfig.build.json']) at(join(root, p), T);
    at(join(root, 'dist', '.build-stamp'), T + 10);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is current when nothing under src/ or the tsconfigs changed since the build stamp', () => {
    expect(isStale(root)).toBeUndefined();
  });

  it.each([
    ['an edited source file', 'src/detection/engine.ts'],
    ['an edited tsconfig', 'tsconfig.build.json'],
    ['an edited tool (tools/, compiled to dist/tools/)', 'tools/bench-detect.ts'],
  ])('is stale after %s', (_what, file) => {
    at(join(root, file), T + 20);
    expect(isStale(root)).toBe('src/ or tools/ changed since the last build');
  });

  it('is stale after a source file was deleted (its directory changed)', () => {
    unlinkSync(join(root, 'src', 'detection', 'engine.ts'));
    at(join(root, 'src', 'detection'), T + 20);
    expect(isStale(root)).toBe('src/ or tools/ changed since the last build');
  });

  it('is stale when dist/ was never built or its stamp is missing', () => {
    unlinkSync(join(root, 'dist', '.build-stamp'));
    expect(isStale(root)).toBe('dist/ has not been built');
    writeFileSync(join(root, 'dist', '.build-stamp'), 'x');
    unlinkSync(join(root, 'dist', 'main.js'));
    expect(isStale(root)).toBe('dist/ has not been built');
  });
});
