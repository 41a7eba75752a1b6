/**
 * One linear pass over a JSON text that JSON.parse has already accepted, finding what JSON.parse lets
 * through silently: a key repeated in one object (JSON.parse keeps the last copy, so a scanner sees
 * `"hi"` while the raw bytes forwarded upstream still carry the first copy) and nesting deeper than a
 * limit (JSON.stringify and recursive walkers overflow the stack on deep documents).
 *
 * Keys are compared decoded (`"a"` and `"\u0061"` are the same key). String bodies are skipped with
 * indexOf, so the cost is dominated by the number of structural characters, not the text length.
 */

export type JsonStructureProblem =
  | { kind: 'duplicate_key'; key: string; path: string }
  | { kind: 'too_deep'; depth: number; path: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** A container being read: an object (its keys so far, the current key) or an array (the current index). */
interface Frame {
  keys: Set<string> | null;
  key: string;
  index: number;
  expectKey: boolean;
}

/** Index of the quote that closes the string opened at `open`. */
function stringEnd(text: string, open: number): number {
  let q = text.indexOf('"', open + 1);
  for (;;) {
    let backslashes = 0;
    for (let k = q - 1; text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
}

function decodeKey(text: string, open: number, close: number): string {
  const raw = text.slice(open + 1, close);
  return raw.includes('\\') ? (JSON.parse(text.slice(open, close + 1)) as string) : raw;
}

const MAX_SHOWN_KEY = 64;
const show = (key: string) => (key.length > MAX_SHOWN_KEY ? `${key.slice(0, MAX_SHOWN_KEY)}…` : key);

/** `messages[0].content`: where the reader stands (only built when there is a problem to report). */
function pathOf(stack: Frame[]): string {
  let path = '';
  for (const frame of stack) {
    if (frame.keys) path += path === '' ? show(frame.key) : `.${show(frame.key)}`;
    else path += `[${frame.index}]`;
  }
  return path === '' ? 'body' : path;
}

/**
 * The first structural problem of `text` (which must be valid JSON), or null. `maxDepth` counts
 * containers: `{"a":[1]}` has depth 2.
 */
export function findJsonStructureProblem(text: string, maxDepth: number): JsonStructureProblem | null {
  const stack: Frame[] = [];
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        const key = decodeKey(text, i, close);
        top.expectKey = false;
        if (top.keys.has(key)) {
          top.key = key;
          return { kind: 'duplicate_key', key: show(key), path: pathOf(stack) };
        }
        top.keys.add(key);
        top.key = key;
      }
      i = close;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= maxDepth) return { kind: 'too_deep', depth: maxDepth, path: pathOf(stack) };
      stack.push({ keys: c === OPEN_OBJECT ? new Set() : null, key: '', index: 0, expectKey: c === OPEN_OBJECT });
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
    } else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.keys) top.expectKey = true;
      else if (top) top.index++;
    }
  }
  return null;
}
