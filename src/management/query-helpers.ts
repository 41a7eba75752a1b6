/** Small helpers shared by the management services' SQL and views. */

/** A case-insensitive "contains" LIKE pattern: %, _ and \ in the user's text are literal. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A timestamp column (Date from pg/PGlite, or string) as ISO 8601. */
export function isoString(d: Date | string): string {
  return d instanceof Date ? d.toISOString() : new Date(d).toISOString();
}
