/** Small helpers shared by the management services' SQL and views. */

/** A case-insensitive "contains" LIKE pattern: %, _ and \ in the user's text are literal. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A timestamp column (Date from pg/PGlite, or string) as ISO 8601. */
export function isoString(d: Date | string): string {
  return d instanceof Date ? d.toISOString() : new Date(d).toISOString();
}

/**
 * `<column> = $1 AND …` of a list query: the organization first, then each filter added with
 * `add('col = ?', value)` (the `?` becomes the next bound parameter; values are never spliced in).
 */
export class SqlFilter {
  private readonly parts: string[];
  readonly params: unknown[];

  constructor(organizationColumn: string, organizationId: string) {
    this.parts = [`${organizationColumn} = $1`];
    this.params = [organizationId];
  }

  add(sql: string, value: unknown): void {
    this.params.push(value);
    this.parts.push(sql.replace('?', `$${this.params.length}`));
  }

  /** A condition without a value (a fixed SQL fragment, never user text). */
  addCondition(sql: string): void {
    this.parts.push(sql);
  }

  get sql(): string {
    return this.parts.join(' AND ');
  }
}
