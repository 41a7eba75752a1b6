/**
 * Where each scanned content field sits in the text the detection service saw, so a finding's offsets
 * (UTF-16, end exclusive, into that text) map back to (JSON path of the field, offsets within it).
 *
 * A request's fields are joined with FIELD_SEPARATOR into one Detect text (joinFields); a stream's
 * pieces are concatenated as they arrive (StreamFieldLayout). Segments are kept in text order, so a
 * span is located by a binary search over their starts: O(log fields + fields the span covers), and only
 * ever done for the findings of fired categories.
 */

/** One content field: its JSON path in the request or response (`messages[2].content`) and its text. */
export interface TextField {
  path: string;
  text: string;
}

/** A span inside one field. */
export interface FieldSpan {
  path: string;
  start: number;
  end: number;
}

/** Between two fields of one Detect text (so a signature cannot run from one field into the next). */
export const FIELD_SEPARATOR = '\n\n';

interface Segment {
  /** Offset of the segment in the scanned text. */
  at: number;
  length: number;
  path: string;
  /** Offset of the segment's first character inside its field. */
  fieldStart: number;
}

export class FieldLayout {
  private readonly starts: number[] = [];
  private readonly segments: Segment[] = [];

  /** Adds a segment after every earlier one (`at` at or past the previous segment's end); the layout owns it. */
  append(segment: Segment): void {
    this.starts.push(segment.at);
    this.segments.push(segment);
  }

  /** Grows the last segment by `length` characters (a stream piece continuing the same field). */
  extendLast(length: number): void {
    const last = this.segments[this.segments.length - 1];
    if (last) last.length += length;
  }

  get last(): Readonly<Segment> | undefined {
    return this.segments[this.segments.length - 1];
  }

  /**
   * The parts of [start, end) in each field it covers (a classifier window can span several fields),
   * adjacent parts of one field merged. A span that only covers separator text is reported as an empty
   * span at the end of the field before it.
   */
  locate(start: number, end: number): FieldSpan[] {
    const out: FieldSpan[] = [];
    let i = Math.max(0, this.indexAt(start));
    for (; i < this.segments.length; i++) {
      const s = this.segments[i] as Segment;
      if (s.at >= end && !(start === end && s.at === start)) break;
      const from = Math.max(start, s.at);
      const to = Math.min(end, s.at + s.length);
      if (to < from || (to === from && start !== end)) continue;
      const part = { path: s.path, start: s.fieldStart + (from - s.at), end: s.fieldStart + (to - s.at) };
      const prev = out[out.length - 1];
      if (prev && prev.path === part.path && prev.end === part.start) prev.end = part.end;
      else out.push(part);
      if (start === end) break;
    }
    if (out.length === 0) {
      const before = this.segments[this.indexAt(start)];
      if (before) out.push({ path: before.path, start: before.fieldStart + before.length, end: before.fieldStart + before.length });
    }
    return out;
  }

  /** Index of the last segment starting at or before `offset` (-1 if none). */
  private indexAt(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.starts[mid] as number) <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}

/**
 * One Detect text from the fields (joined with FIELD_SEPARATOR) and the layout to map findings back.
 * The layout is built on the first `locate` only: a request whose verdict fired nothing never pays for it.
 */
export function joinFields(fields: readonly TextField[]): { text: string; layout: Pick<FieldLayout, 'locate'> } {
  let built: FieldLayout | undefined;
  const layout = {
    locate(start: number, end: number): FieldSpan[] {
      built ??= layoutOf(fields);
      return built.locate(start, end);
    },
  };
  return { text: fields.map((f) => f.text).join(FIELD_SEPARATOR), layout };
}

function layoutOf(fields: readonly TextField[]): FieldLayout {
  const layout = new FieldLayout();
  let at = 0;
  for (const f of fields) {
    layout.append({ at, length: f.text.length, path: f.path, fieldStart: 0 });
    at += f.text.length + FIELD_SEPARATOR.length;
  }
  return layout;
}

/**
 * The layout of one streamed text (a detection stream per choice): pieces of several fields arrive
 * interleaved (content, then tool-call arguments, ...); offsets inside a field count that field's
 * characters across the whole stream (its concatenated streamed content).
 */
export class StreamFieldLayout {
  readonly layout = new FieldLayout();
  private readonly fieldLengths = new Map<string, number>();
  private length = 0;

  /**
   * What to append before a piece of `path`: FIELD_SEPARATOR when the stream's previous piece came from
   * another kind of field (a choice's refusal, reasoning or citation and then its content are different
   * texts: glued, "...3435Done." or "...íóńśDone", an encoded blob or a word-level obfuscation at the end
   * of one would not be decoded), else ''. Fields of one kind that differ only by index (a messages
   * answer's text blocks split by citations, content parts) continue one text. The separator belongs
   * to no field; record it with `skip`.
   */
  separatorBefore(path: string): string {
    const last = this.layout.last;
    // The usual case, a stream's next piece of the field it is in, without building the kinds.
    if (!last || last.path === path) return '';
    const kind = (p: string) => p.replace(/\[\d+\]/g, '[]');
    return kind(last.path) !== kind(path) ? FIELD_SEPARATOR : '';
  }

  /** Records text appended to the stream that belongs to no field (a separator). */
  skip(length: number): void {
    this.length += length;
  }

  /** Records a piece appended to the stream. */
  push(path: string, text: string): void {
    if (text.length === 0) return;
    const last = this.layout.last;
    const fieldStart = this.fieldLengths.get(path) ?? 0;
    if (last && last.path === path) this.layout.extendLast(text.length);
    else this.layout.append({ at: this.length, length: text.length, path, fieldStart });
    this.fieldLengths.set(path, fieldStart + text.length);
    this.length += text.length;
  }

  locate(start: number, end: number): FieldSpan[] {
    return this.layout.locate(start, end);
  }
}

/** `base.key`, or `base["key"]` for a key that is not an identifier. */
export function childPath(base: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return base === '' ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

export function indexPath(base: string, index: number): string {
  return `${base}[${index}]`;
}
