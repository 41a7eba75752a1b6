import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../shared/errors';
import { documented } from '../../shared/http/openapi';

/**
 * The console (docs/console.md): a single-page web app for security teams, served by the gateway at
 * GET /console with its hashed assets under /console/assets/. It is built from console/ (Preact + Vite,
 * `npm run build:console`) into console/dist, which is committed: the gateway serves it as is, offline
 * (no CDN, no build step at install). The app talks to /graphql with the key the user types in.
 */

/** console/dist at the package root; this file sits three levels below it as source and compiled. */
export const CONSOLE_DIST = path.resolve(__dirname, '..', '..', '..', 'console', 'dist');
export const CONSOLE_PATH = '/console';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/**
 * Only the app's own code, styles and images, and calls to this origin; no framing, no referrer (the
 * app never puts the key in a URL, this is defence in depth). Preact sets styles through the CSSOM,
 * which style-src does not restrict.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Asset {
  body: Buffer;
  type: string;
}

/** Every file of the build, read once (a few hundred KB): requests are answered from memory, never from a path. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const file = path.posix.join(rel, name);
      if (statSync(path.join(dir, file)).isDirectory()) walk(file);
      else if (TYPES[path.extname(name)]) assets.set(file, { body: readFileSync(path.join(dir, file)), type: TYPES[path.extname(name)]! });
    }
  };
  walk('');
  return assets;
}

const notBuilt = () => new AppError('not_found', 'The console is not built (npm run build:console writes console/dist)', { code: 'console_not_built' });

function send(reply: FastifyReply, asset: Asset, cache: string): FastifyReply {
  return reply
    .header('content-type', asset.type)
    .header('cache-control', cache)
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .send(asset.body);
}

export function registerConsoleRoutes(app: FastifyInstance, dir: string = CONSOLE_DIST): void {
  const assets = loadAssets(dir);
  const html = { 200: { description: 'The console (an HTML page; sign in with a full-scope project key)', content: { 'text/html': z.string() } } };
  app.get(
    CONSOLE_PATH,
    documented({ tags: ['console'], summary: 'The web console (single-page app; no authentication to load it, the API calls carry the key)', security: [], responses: html, errors: [404] }),
    async (_request, reply) => {
      const index = assets.get('index.html');
      if (!index) throw notBuilt();
      // The page names the current hashed assets: never cached.
      return send(reply, index, 'no-store');
    },
  );
  app.get(
    `${CONSOLE_PATH}/assets/:file`,
    documented({
      tags: ['console'],
      summary: 'A static asset of the console (hashed file names, cached for a year)',
      security: [],
      params: z.strictObject({ file: z.string() }),
      responses: { 200: { description: 'The file (JavaScript, CSS or an image)', content: { 'text/javascript': z.string(), 'text/css': z.string() } } },
      errors: [404],
    }),
    async (request, reply) => {
      const { file } = request.params as { file: string };
      const asset = assets.get(`assets/${file}`);
      if (!asset) throw new AppError('not_found', 'No such console asset', { code: 'not_found' });
      return send(reply, asset, 'public, max-age=31536000, immutable');
    },
  );
}
