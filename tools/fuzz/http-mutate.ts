import { randomBytes } from 'node:crypto';
import type { Rng } from './prng';
import type { HeaderList } from './raw-http';

/**
 * Mutations of a request's head: the auth header missing, duplicated or malformed, the content type
 * wrong, Content-Length wrong (smaller than the body, not a number, twice, with Transfer-Encoding), the
 * body chunked (well or badly), huge or many headers, bytes a header may not carry, other paths and
 * methods. Never a Content-Length larger than the body: the server would rightly wait for the rest.
 */
export interface RequestShape {
  method: string;
  path: string;
  /** Without Content-Length: added by `finalize`. */
  headers: HeaderList;
  body: Buffer;
  /** The auth header's name (authorization or x-svc-key) and its valid value. */
  auth: { name: string; value: string };
}

const without = (headers: HeaderList, name: string) => headers.filter(([n]) => n.toLowerCase() !== name);
const withValue = (headers: HeaderList, name: string, value: string | Buffer): HeaderList => [...without(headers, name), [name, value]];

/** A key of the right shape that no project has. */
const unknownKey = () => `svc_sk_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'a').slice(0, 40)}`;

function mutateAuth(rng: Rng, r: RequestShape): HeaderList {
  const { name, value } = r.auth;
  const bare = value.replace(/^Bearer /, '');
  const bearer = name === 'authorization' ? 'Bearer ' : '';
  switch (rng.int(6)) {
    case 0: return without(r.headers, name);
    case 1: return [...r.headers, [name, value]];
    case 2: return [...r.headers, [name, `${bearer}${unknownKey()}`]];
    case 3: return withValue(r.headers, name, rng.pick(['', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `bearer ${bare}`, `${bearer}${bare}x`, `${bearer}${bare.slice(0, 20)}`, `${bearer}svc_sk_\u00e9\u00e9`, `${bearer}${bare} ${bare}`]));
    case 4: return withValue(r.headers, name, `${bearer}${unknownKey()}`);
    default: return [...without(r.headers, name), ['Authorization', `Bearer ${bare}`], ['X-Svc-Key', bare]];
  }
}

const CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1',
  'application/json; charset=utf-16', 'APPLICATION/JSON', 'application/json, text/plain', 'application/jsonx', 'application/vnd.api+json',
  'application/json;', '*/*', '\u00ff',
];

export interface HeadMutation {
  headers: HeaderList;
  body: Buffer;
  method: string;
  path: string;
  /** Content-Length is already set (or deliberately absent): finalize leaves it alone. */
  lengthSet: boolean;
  names: string[];
}

function chunked(rng: Rng, body: Buffer, bad: boolean): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const n = Math.min(body.length - at, rng.range(1, 4096));
    parts.push(Buffer.from(`${bad && rng.chance(0.3) ? 'zz' : n.toString(16)}\r\n`), body.subarray(at, at + n), Buffer.from('\r\n'));
    at += n;
  }
  parts.push(Buffer.from('0\r\n\r\n')); // never incomplete: the server would rightly wait for the rest
  return Buffer.concat(parts);
}

/** 0–2 head mutations (most requests keep a valid head so their body is what is fuzzed). */
export function mutateHead(rng: Rng, r: RequestShape, paths: readonly string[]): HeadMutation {
  const m: HeadMutation = { headers: [...r.headers], body: r.body, method: r.method, path: r.path, lengthSet: false, names: [] };
  const count = rng.chance(0.7) ? 0 : rng.range(1, 2);
  for (let i = 0; i < count; i++) {
    const kind = rng.int(12);
    m.names.push(['auth', 'content_type', 'length_smaller', 'length_bad', 'length_twice', 'chunked', 'huge_header', 'many_headers', 'header_bytes', 'path', 'method', 'session_id'][kind]!);
    switch (kind) {
      case 0: m.headers = mutateAuth(rng, { ...r, headers: m.headers }); break;
      case 1: m.headers = rng.chance(0.2) ? without(m.headers, 'content-type') : withValue(m.headers, 'content-type', rng.pick(CONTENT_TYPES)); break;
      case 2: m.headers.push(['Content-Length', String(Math.max(0, m.body.length - rng.range(1, 50)))]); m.lengthSet = true; break;
      case 3: m.headers.push(['Content-Length', rng.pick(['abc', '-1', '+5', '1e3', ' ', `${m.body.length}, ${m.body.length}`, '0x10', '99999999999999999999'])]); m.lengthSet = true; break;
      case 4: m.headers.push(['Content-Length', String(m.body.length)], ['Content-Length', String(m.body.length + 1)]); m.lengthSet = true; break;
      case 5: {
        const bad = rng.chance(0.4);
        m.body = chunked(rng, m.body, bad);
        m.headers.push(['Transfer-Encoding', 'chunked']);
        if (rng.chance(0.3)) m.headers.push(['Content-Length', String(m.body.length)]);
        m.lengthSet = true;
        break;
      }
      case 6: m.headers.push(['X-Fuzz-Pad', 'a'.repeat(rng.pick([1000, 8000, 15000, 17000, 70000]))]); break;
      case 7: for (let j = rng.pick([100, 500, 3000]); j > 0; j--) m.headers.push([`x-f${j}`, 'v']); break;
      case 8: m.headers.push([rng.pick(['X-Bad', 'Bad Name', 'X\u0000', '']), Buffer.from(rng.pick([[0x00], [0x7f], [0x0a, 0x20], [0xff, 0xfe], [0x0d]]))]); break;
      case 9: m.path = rng.pick([...paths, `${r.path}?x=%zz`, `${r.path}//`, `${r.path}/extra`, '/v1/%ZZ', '/v1/%00', `${r.path}?${'q'.repeat(9000)}`, '*', `/../${r.path}`]); break;
      case 10: m.method = rng.pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'FUZZ']); break;
      default: m.headers.push(['X-Agent-Session-Id', rng.pick(['not-a-uuid', '', '\u00e9', 'x'.repeat(5000), '00000000-0000-0000-0000-000000000000'])]);
    }
  }
  return m;
}

/** The request bytes' final head: Content-Length (unless a mutation set it) and Connection: close. */
export function finalizeHead(m: HeadMutation): HeaderList {
  const headers = [...m.headers];
  if (!m.lengthSet && (m.body.length > 0 || m.method !== 'GET')) headers.push(['Content-Length', String(m.body.length)]);
  headers.push(['Connection', 'close']);
  return headers;
}
