import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The console's built output (console/dist) is committed and served as is (docs/console.md): it must be
 * the build of the committed sources. scripts/build-console.js writes the hash of the sources it built
 * into console/dist/.source-hash; an edit of console/src without `npm run build:console` fails here.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { sourceHash, HASH_FILE } = require('../../../scripts/build-console.js') as { sourceHash(): string; HASH_FILE: string };

const ROOT = join(__dirname, '..', '..', '..');
const DIST = join(ROOT, 'console', 'dist');

describe('console/dist (committed build output)', () => {
  it('was built from the current console sources (else: npm run build:console)', () => {
    expect(readFileSync(join(DIST, HASH_FILE), 'utf8').trim()).toBe(sourceHash());
  });

  it('is self-contained: the page loads only its own hashed assets under /console/assets/ (no CDN)', () => {
    const html = readFileSync(join(DIST, 'index.html'), 'utf8');
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(2);
    const assets = readdirSync(join(DIST, 'assets'));
    for (const ref of refs) {
      expect(ref).toMatch(/^\/console\/assets\/[\w.-]+$/);
      expect(assets).toContain(ref.slice('/console/assets/'.length));
    }
    for (const file of assets) expect(readFileSync(join(DIST, 'assets', file), 'utf8')).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i);
  });
});
