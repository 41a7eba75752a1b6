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

/**
 * A container being read: an object (its keys so far, the current key) or an array (the current
 * index). Keys sit in an array while there are few (most objects of a request have a handful) and move
 * to a Set past SMALL_OBJECT, so tiny objects cost no Set and huge ones stay linear.
 */
interface Frame {
  isObject: boolean;
  keys: string[];
  keySet: Set<string> | null;
  key: string;
  index: number;
  expectKey: boolean;
}

const SMALL_OBJECT = 8;

/** Records `key` in the object; false when it was already there. */
function addKey(frame: Frame, key: string): boolean {
  frame.key = key;
  if (frame.keySet) {
    if (frame.keySet.has(key)) return false;
    frame.keySet.add(key);
    return true;
  }
  if (frame.keys.includes(key)) return false;
  frame.keys.push(key);
  if (frame.keys.length > SMALL_OBJECT) frame.keySet = new Set(frame.keys);
  return true;
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
    if (frame.isObject) path += path === '' ? show(frame.key) : `.${show(frame.key)}`;
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
      if (top?.expectKey) {
        top.expectKey = false;
        const key = decodeKey(text, i, close);
        if (!addKey(top, key)) return { kind: 'duplicate_key', key: show(key), path: pathOf(stack) };
      }
      i = close;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= maxDepth) return { kind: 'too_deep', depth: maxDepth, path: pathOf(stack) };
      const isObject = c === OPEN_OBJECT;
      stack.push({ isObject, keys: [], keySet: null, key: '', index: 0, expectKey: isObject });
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
    } else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.isObject) top.expectKey = true;
      else if (top) top.index++;
    }
  }
  return null;
}

/**
 * Whether a JSON text JSON.parse accepted repeats a key in one object. For what an upstream sends: a
 * scan of the parsed value sees the last copy while a client's parser may keep the first, so such a
 * body cannot be scanned reliably and is refused (fail closed). Depth is not limited here.
 */
export function repeatsJsonKey(text: string): boolean {
  return findJsonStructureProblem(text, Number.POSITIVE_INFINITY)?.kind === 'duplicate_key';
}
