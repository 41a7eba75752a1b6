'use strict';
/**
 * Builds the console (console/: Preact + Vite) into console/dist, which is committed and served by the
 * gateway at /console (src/gateway/routes/console.routes.ts). Committed rather than built at install so
 * `npm install && npm start` needs no bundler, a production install (--omit=dev) and the Docker image
 * serve it as is, and CI spends nothing on it. console/dist/.source-hash records the sources it was built
 * from; a unit test (test/unit/scripts/console-build.test.ts) fails when they changed without a rebuild.
 *
 *   npm run build:console
 */
const { createHash } = require('node:crypto');
const { readdirSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const CONSOLE = join(ROOT, 'console');
const SOURCES = ['index.html', 'vite.config.mjs', 'src'];

function files(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

/** SHA-256 over the sources' relative paths and bytes (and the bundler's and Preact's versions). */
function sourceHash(root = ROOT) {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap((s) => files(join(root, 'console', s)))) {
    hash.update(relative(root, file).split('\\').join('/'));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  for (const dep of ['vite', 'preact']) hash.update(`${dep}@${lock.packages[`node_modules/${dep}`]?.version}\0`);
  return hash.digest('hex');
}

module.exports = { sourceHash, HASH_FILE: '.source-hash' };

if (require.main === module) {
  (async () => {
    const { build } = await import('vite');
    await build({ configFile: join(CONSOLE, 'vite.config.mjs') });
    writeFileSync(join(CONSOLE, 'dist', '.source-hash'), `${sourceHash()}\n`);
    process.stdout.write('console/dist built\n');
  })().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
