import { copyFileSync, cpSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * Start-up cost of the embedded database (PGlite, PostgreSQL compiled to WebAssembly).
 *
 * - An empty data directory needs `initdb`: 6–20 s of WebAssembly and ~500 MB of resident memory the
 *   process keeps afterwards. `npm install` (npm's prepare, scripts/build.js) runs initdb once into
 *   dist/pglite-template-<version>/; the first start copies that directory into the empty DATA_DIR
 *   (file copies, well under a second), and PGlite then opens it as it opens any existing database.
 *   Without a template (or in memory) PGlite runs initdb itself, as before.
 * - PostgreSQL's default `shared_buffers` (128 MB) is memory PGlite touches at start; the embedded
 *   database (policies, projects, audit events of one deployment) runs on 16 MB, the files stay in the
 *   operating system's page cache.
 */

/** PostgreSQL settings of the embedded database, after PGlite's own start parameters. */
export const PGLITE_SETTINGS: readonly string[] = ['shared_buffers=16MB', 'temp_buffers=1MB', 'wal_buffers=1MB'];

/** PGlite's start parameters with {@link PGLITE_SETTINGS} appended (`-c name=value` each). */
export function pgliteStartParams(): string[] {
  return [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((s) => ['-c', s])];
}

function pgliteVersion(): string {
  const pkg = join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

/**
 * The template of this PGlite version: `dist/pglite-template-<version>/` at the root of the repository
 * (the same path from src/ under jest and from dist/). Another version's template is never used.
 */
export function pgliteTemplateDir(): string {
  return resolve(__dirname, '..', '..', 'dist', `pglite-template-${pgliteVersion()}`);
}

const isCluster = (dir: string) => existsSync(join(dir, 'PG_VERSION'));

/** The template directory when it exists and is complete. */
export function availablePGliteTemplate(): string | undefined {
  const dir = pgliteTemplateDir();
  return isCluster(dir) ? dir : undefined;
}

/** Runs initdb once into `dir` (through a temporary directory, renamed when complete). */
export async function writePGliteTemplate(dir = pgliteTemplateDir()): Promise<string> {
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const db = await PGlite.create({ dataDir: tmp });
  await db.close();
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

/**
 * Copies the template (default: this version's under dist/) into `dataDir` when that holds no database
 * yet (no PG_VERSION) and the template exists; PG_VERSION is copied last, so an interrupted copy is not taken for a database (the next start
 * copies again). Returns whether it copied.
 */
export function seedFromTemplate(dataDir: string, template = availablePGliteTemplate()): boolean {
  if (!template || !isCluster(template) || isCluster(dataDir)) return false;
  cpSync(template, dataDir, { recursive: true, force: true, filter: (src) => src !== join(template, 'PG_VERSION') });
  copyFileSync(join(template, 'PG_VERSION'), join(dataDir, 'PG_VERSION'));
  return true;
}
