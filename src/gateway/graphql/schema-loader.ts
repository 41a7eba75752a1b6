import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The SDL lives in `<package root>/schema/*.graphql`, one file per feature. This file sits three levels
 * below the root both as source (src/gateway/graphql) and compiled (dist/gateway/graphql).
 */
export const SCHEMA_DIR = path.resolve(__dirname, '..', '..', '..', 'schema');

/** Reads every .graphql file of the schema directory, in name order (the files extend one another). */
export function loadTypeDefs(dir: string = SCHEMA_DIR): string[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort();
  if (files.length === 0) throw new Error(`no .graphql files in ${dir}`);
  return files.map((f) => readFileSync(path.join(dir, f), 'utf8'));
}
