import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHAT_REQUEST, CHAT_RESPONSE, CHAT_STREAM, RESPONSE_ONLY } from './chat-fields';
import {
  chatRequestFields, chatResponseFields, chatStreamFields, messagesRequestFields, messagesResponseFieldsOf, messagesStreamFields, pathsOf,
  responsesRequestFields, responsesResponseFields, responsesStreamFields, type Extract,
} from './extractors';
import { MESSAGES_REQUEST, MESSAGES_RESPONSE, MESSAGES_STREAM } from './messages-fields';
import { VARIANTS } from './payloads';
import { RESPONSES_REQUEST, RESPONSES_RESPONSE, RESPONSES_STREAM } from './responses-fields';
import { crossTable, DOC_ONLY, sampled, type FieldRow } from './table';

/**
 * The coverage table cannot silently fall behind the extractors: every row lands in a field the
 * extractor reads (so its label is true), and every field path the extractor's source can produce
 * (its path literals: `${path}.reasoning_content`, 'prediction.content', at('thinking')) is the path,
 * or a part of the path, of some row. A new field in an extractor without a coverage row fails here.
 * Exclusions are only the declared ones.
 */

const MARKER = 'coverage-marker-7c1e';
const norm = (path: string) => path.replace(/\[\d+\]/g, '[]');

const WIRES: Array<[wire: string, rows: FieldRow[], extract: Extract]> = [
  ['chat request', CHAT_REQUEST, chatRequestFields],
  ['chat response', CHAT_RESPONSE, chatResponseFields],
  ['chat stream', CHAT_STREAM, chatStreamFields],
  ['messages request', MESSAGES_REQUEST, messagesRequestFields],
  ['messages response', MESSAGES_RESPONSE, messagesResponseFieldsOf],
  ['messages stream', MESSAGES_STREAM, messagesStreamFields],
  ['responses request', RESPONSES_REQUEST, responsesRequestFields],
  ['responses response', RESPONSES_RESPONSE, responsesResponseFields],
  ['responses stream', RESPONSES_STREAM, responsesStreamFields],
];

/**
 * Path literals of the extractors that name no text: a file id or URL, audio, a generated image are
 * listed as unscanned content (X-Risk-Unscanned-Content), never scanned.
 */
const NOT_TEXT = ['.file_id', '.file_url', '.input_audio', '.result'];

const isRequest = (rows: FieldRow[]) => rows === CHAT_REQUEST || rows === MESSAGES_REQUEST || rows === RESPONSES_REQUEST;
const rowPaths = (row: FieldRow, extract: Extract) => pathsOf(row, extract, MARKER).map(norm);

/** The path literals of an extractor's source, `${...}` replaced by nothing and indices normalised. */
export function sourcePathLiterals(file: string): string[] {
  const src = readFileSync(join(__dirname, '..', '..', file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const out = new Set<string>();
  for (const m of src.matchAll(/`([^`\s]*)`/g)) {
    const literal = m[1]!.replace(/\[\$\{[^}]*\}\]/g, '[]').replace(/\$\{[^}]*\}/g, '');
    if (/[A-Za-z]/.test(literal) && /^[\w.[\]]+$/.test(literal)) out.add(literal);
  }
  for (const m of src.matchAll(/\b(?:str|json|contentTexts|blockTexts)\([^,()]+,\s*'([\w.[\]]+)'/g)) out.add(m[1]!);
  for (const m of src.matchAll(/\bat\('(\w+)'\)/g)) out.add(`.${m[1]}`);
  return [...out];
}

describe('the coverage table covers every field the extractors read', () => {
  it.each(WIRES.map(([wire, rows, extract]) => [wire, rows, extract] as const))('%s: every row lands in a scanned field', (_wire, rows, extract) => {
    expect(rows.filter((r) => rowPaths(r, extract).length === 0).map((r) => r.label)).toEqual([]);
  });

  it.each([
    ['src/gateway/proxy/openai-chat.schema.ts', [CHAT_REQUEST, CHAT_RESPONSE, CHAT_STREAM], 20],
    ['src/sensor/messages.schema.ts', [MESSAGES_REQUEST], 10],
    ['src/sensor/messages-response.ts', [MESSAGES_RESPONSE, MESSAGES_STREAM], 5],
    ['src/gateway/proxy/openai-responses.schema.ts', [RESPONSES_REQUEST, RESPONSES_RESPONSE, RESPONSES_STREAM], 20],
  ] as const)('every path literal of %s is covered by a row', (file, tables, least) => {
    const extractOf = (rows: FieldRow[]) => WIRES.find(([, r]) => r === rows)![2];
    const covered = tables.flatMap((rows) => rows.flatMap((r) => rowPaths(r, extractOf(rows))));
    const literals = sourcePathLiterals(file);
    expect(literals.length).toBeGreaterThanOrEqual(least); // the scan of the source found the extractor's paths
    expect(literals.filter((l) => !covered.some((p) => p.includes(l)) && !NOT_TEXT.includes(l))).toEqual([]);
  });

  it('a new field in an extractor would be caught (the check is not vacuous)', () => {
    const withoutRow = CHAT_REQUEST.filter((r) => r.label !== 'assistant tool_calls[].custom.input').flatMap((r) => rowPaths(r, chatRequestFields));
    expect(withoutRow.some((p) => p.includes('.custom.input'))).toBe(false);
    expect(sourcePathLiterals('src/gateway/proxy/openai-chat.schema.ts')).toContain('.reasoning_content');
  });

  it('exclusions are only the declared ones', () => {
    const declared = new Set([DOC_ONLY, ...Object.values(RESPONSE_ONLY)]);
    for (const rows of WIRES.map(([, r]) => r)) {
      for (const r of rows) for (const [id, reason] of Object.entries(r.excluded ?? {})) {
        expect(VARIANTS.map((v) => v.id)).toContain(id);
        declared.add(reason);
      }
      const { excluded } = crossTable(rows, VARIANTS, isRequest(rows) ? {} : RESPONSE_ONLY);
      expect(excluded.filter(([, , reason]) => !declared.has(reason))).toEqual([]);
    }
  });

  it.each(WIRES.map(([wire, rows]) => [wire, rows] as const))('%s: the default sample checks every field and every variant a field carries', (_wire, rows) => {
    const table = crossTable(rows, VARIANTS, isRequest(rows) ? {} : RESPONSE_ONLY);
    const sample = sampled(table);
    expect(rows.filter((r) => !sample.some((c) => c.row === r)).map((r) => r.label)).toEqual([]);
    const carried = VARIANTS.filter((v) => table.cases.some((c) => c.variant === v));
    expect(carried.filter((v) => !sample.some((c) => c.variant === v)).map((v) => v.id)).toEqual([]);
  });
});
