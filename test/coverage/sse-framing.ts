/**
 * Every way the HTML standard's event-stream rules let an upstream frame the same events: line ends
 * (LF, CRLF, CR only), a leading byte order mark, a last event without its blank line, comment lines,
 * `data:` without the space, an event's data over several `data:` lines, and any split into reads. The
 * parsed events are the same in each; a gateway that parses less than the standard allows either
 * releases bytes it has not scanned or mangles a stream it should pass.
 */
export interface Framing {
  id: string;
  nl: string;
  bom?: boolean;
  /** The stream ends with its last event unterminated (no blank line, no line end, no [DONE]). */
  open?: boolean;
  /** A comment line before every event (and an `id:` field, which a parser must ignore for data). */
  comments?: boolean;
  /** `data:` without the space after the colon. */
  noSpace?: boolean;
  /** Each JSON event's data over two `data:` lines, cut between two members (the parser joins them with LF). */
  multiline?: boolean;
  /** Written in reads of this many bytes (cuts through UTF-8 sequences, escapes, line ends). */
  readBytes?: number;
}

export const LF: Framing = { id: 'LF', nl: '\n' };

export const FRAMINGS: Framing[] = [
  LF,
  { id: 'CRLF', nl: '\r\n' },
  { id: 'CR-only', nl: '\r' },
  { id: 'leading BOM', nl: '\n', bom: true },
  { id: 'leading BOM, CRLF', nl: '\r\n', bom: true },
  { id: 'final event without blank line', nl: '\n', open: true },
  { id: 'final event without blank line, CR-only', nl: '\r', open: true },
  { id: 'comment lines and id fields', nl: '\n', comments: true },
  { id: 'data: without space', nl: '\n', noSpace: true },
  { id: 'multi-line data', nl: '\n', multiline: true },
  { id: 'multi-line data, CRLF, no space', nl: '\r\n', multiline: true, noSpace: true },
  { id: 'reads of 7 bytes', nl: '\n', readBytes: 7 },
  { id: 'reads of 3 bytes, CR-only', nl: '\r', readBytes: 3 },
];

/** Cuts a JSON text between two members (before `"choices"` when it has one), for multi-line data. */
function cutJson(data: string): string[] {
  const at = data.indexOf(',"choices"');
  return at > 0 ? [data.slice(0, at + 1), data.slice(at + 1)] : [data];
}

/** The bytes of a stream whose events carry `datas` (then [DONE] unless open or not `done`), framed as `f` says, in reads. */
export function frameStream(datas: string[], f: Framing, done = true): Buffer[] {
  const field = f.noSpace ? 'data:' : 'data: ';
  const events = [...datas, ...(f.open || !done ? [] : ['[DONE]'])].map((d, i) => {
    const lines = (f.multiline ? cutJson(d) : [d]).map((l) => `${field}${l}`);
    return [...(f.comments ? [`: keep-alive ${i}`, `id: ${i}`] : []), ...lines].join(f.nl);
  });
  const text = events.map((e) => `${e}${f.nl}${f.nl}`).join('');
  const raw = Buffer.from((f.bom ? '\uFEFF' : '') + (f.open ? text.slice(0, -2 * f.nl.length) : text), 'utf8');
  if (!f.readBytes) return [raw];
  const pieces: Buffer[] = [];
  for (let i = 0; i < raw.length; i += f.readBytes) pieces.push(raw.subarray(i, i + f.readBytes));
  return pieces;
}
