'use strict';
/**
 * Compiles src/ to dist/ and tools/ to dist/tools/ (tsc -b tools/tsconfig.json: it references
 * tsconfig.build.json, so the product is compiled first; incremental) and records when: dist/.build-stamp.
 *
 *   node scripts/build.js              compile (npm run build)
 *   node scripts/build.js --if-stale   compile only when src/ or a tsconfig changed since the last build
 *   node scripts/build.js --prepare    what `npm install` / `npm ci` run (npm's prepare): compile when
 *                                      stale, then write the embedded database's template
 *                                      (dist/pglite-template-<version>/) when it is missing
 *
 * Plain JavaScript on purpose: it runs before anything is compiled. `npm start` (scripts/start.js) uses
 * isStale() so an edited src/ is never run from an old dist/.
 */
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const INPUTS = ['src', 'tools', 'tsconfig.json', 'tsconfig.build.json'];

/** Newest modification time (ms) under `path`: files and directories (a deleted or renamed file changes its directory's). */
function newestMtime(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  let newest = st.mtimeMs;
  if (st.isDirectory()) {
    for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

/**
 * Why dist/ must be rebuilt, or undefined when it is current (`root`: the repository). A few hundred
 * stat calls: milliseconds.
 */
function isStale(root = ROOT) {
  const stamp = join(root, 'dist', '.build-stamp');
  if (!existsSync(join(root, 'dist', 'main.js')) || !existsSync(stamp)) return 'dist/ has not been built';
  const built = statSync(stamp).mtimeMs;
  const changed = Math.max(...INPUTS.map((p) => newestMtime(join(root, p))));
  return changed > built ? 'src/ or tools/ changed since the last build' : undefined;
}

function typescriptCompiler() {
  try {
    return require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  } catch {
    return undefined;
  }
}

/** Compiles; throws when tsc fails. The stamp gets the time the build started (an edit during the build stays newer). */
function build() {
  const tsc = typescriptCompiler();
  if (!tsc) throw new Error('TypeScript is not installed (npm install without --omit=dev installs it)');
  const started = new Date();
  // tools/ is absent from a tree shipped without it (a Docker layer, a production copy): the product alone.
  const project = existsSync(join(ROOT, 'tools', 'tsconfig.json')) ? join(ROOT, 'tools', 'tsconfig.json') : join(ROOT, 'tsconfig.build.json');
  const r = spawnSync(process.execPath, [tsc, '-b', project], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`tsc failed (exit ${r.status ?? r.signal})`);
  mkdirSync(DIST, { recursive: true });
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
}

/** Writes the embedded database's template when this PGlite version's is missing (src/storage/pglite-template.ts). */
async function ensurePGliteTemplate() {
  const { availablePGliteTemplate, writePGliteTemplate } = require(join(DIST, 'storage', 'pglite-template.js'));
  if (availablePGliteTemplate()) return;
  const started = Date.now();
  const dir = await writePGliteTemplate();
  process.stdout.write(`Embedded database template written (initdb, once): ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
}

module.exports = { isStale, build, ensurePGliteTemplate };

if (require.main === module) {
  const args = process.argv.slice(2);
  const run = async () => {
    if (args.includes('--prepare') && !existsSync(join(ROOT, 'src'))) {
      // e.g. a Docker layer that installs dependencies before copying the sources: nothing to build yet.
      process.stdout.write('scripts/build.js: no src/ yet, nothing to build\n');
      return;
    }
    if (args.includes('--prepare') && !typescriptCompiler()) {
      // A production install (--omit=dev) of a tree shipped with its dist/.
      process.stdout.write('scripts/build.js: TypeScript is not installed, dist/ is used as shipped\n');
      if (existsSync(join(DIST, 'storage', 'pglite-template.js'))) await ensurePGliteTemplate();
      return;
    }
    const onlyIfStale = args.includes('--if-stale') || args.includes('--prepare');
    if (!onlyIfStale || isStale()) build();
    if (args.includes('--prepare')) await ensurePGliteTemplate();
  };
  run().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
