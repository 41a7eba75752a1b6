import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The package version, read once (works from src/ under jest and from dist/ alike: both sit two levels below the root). */
export const VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
