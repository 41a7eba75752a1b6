import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The repository root: the nearest directory above `from` holding package.json. The tools run as
 * TypeScript from tools/ (jest) and compiled from dist/tools/ (npm scripts): one level apart.
 */
export function packageRoot(from: string): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = packageRoot(__dirname);
