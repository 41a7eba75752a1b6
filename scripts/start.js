'use strict';
/**
 * `npm start`: runs dist/main.js in this process (no TypeScript compile on the way). When src/ or a
 * tsconfig changed since the last build (a developer's edit), it compiles first (incremental) and says
 * so: an edited tree never runs stale code. Arguments go to dist/main.js (`npm start` passes `all`).
 */
const { join } = require('node:path');
const { build, isStale } = require('./build');

const stale = isStale();
if (stale) {
  process.stdout.write(`${stale}: compiling (scripts/build.js)…\n`);
  try {
    build();
  } catch (err) {
    process.stderr.write(`Start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
require(join(__dirname, '..', 'dist', 'main.js')).run(process.argv.slice(2), process.env);
