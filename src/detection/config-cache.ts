import { hash } from 'node:crypto';
import type { CompiledConfig } from './engine';

/**
 * The detection service's cache of compiled configurations, keyed by a SHA-256 of the `config` field's
 * bytes as they arrive on the wire.
 *
 * Detection stays stateless: every caller sends its whole configuration with every Detect (and with the
 * start of every DetectStream), and nothing is stored that could go stale or need invalidating across
 * replicas. But a caller repeats the same configuration on every call (the gateway encodes a policy once
 * per version), so the server decodes, validates and compiles each distinct configuration once: a
 * repeated one costs a scan of the message's top-level tags, a hash of its bytes and a lookup. The
 * request's other fields (text, direction, ...) are decoded and checked on every call as before.
 *
 * Only configurations that validated and compiled are cached: an invalid one is decoded, rejected and
 * forgotten, so it is rejected (INVALID_ARGUMENT) on every call. Least-recently-used entries go first
 * once there are more than `maxEntries`, or their wire bytes add up to more than `maxBytes`.
 */

export interface ConfigCacheOptions {
  /** 0 turns the cache off (every call decodes, validates and compiles its configuration). */
  maxEntries: number;
  /** Bound on the wire bytes of the cached configurations (their compiled form is of the same order). */
  maxBytes: number;
}

export const DEFAULT_CONFIG_CACHE_ENTRIES = 256;
export const DEFAULT_CONFIG_CACHE_BYTES = 32 * 1024 * 1024;

/** Where a request's configuration comes from: already compiled (a hit), or to compile (and cache under `key`). */
export type ConfigLookup =
  | { kind: 'hit'; compiled: CompiledConfig }
  | { kind: 'miss'; key: string; bytes: number }
  /** No cacheable `config` field (absent, repeated, malformed, or the cache is off): the uncached path. */
  | { kind: 'none' };

const NONE: ConfigLookup = { kind: 'none' };

interface Entry {
  compiled: CompiledConfig;
  bytes: number;
}

export class ConfigCache {
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;
  private counters = { hits: 0, misses: 0, compiles: 0 };

  constructor(private readonly options: ConfigCacheOptions) {}

  get enabled(): boolean {
    return this.options.maxEntries > 0;
  }

  /** Entries, their bytes, and how often a configuration was found, missed and compiled. */
  stats(): { entries: number; bytes: number; hits: number; misses: number; compiles: number } {
    return { entries: this.entries.size, bytes: this.totalBytes, ...this.counters };
  }

  /** Looks up the configuration in `buf[start, end)` (the value of a `config` field). */
  lookup(buf: Buffer, start: number, end: number): ConfigLookup {
    if (!this.enabled) return NONE;
    const key = hash('sha256', buf.subarray(start, end), 'base64');
    const entry = this.entries.get(key);
    if (!entry) {
      this.counters.misses++;
      return { kind: 'miss', key, bytes: end - start };
    }
    this.counters.hits++;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { kind: 'hit', compiled: entry.compiled };
  }

  /**
   * The compiled configuration of a request: the cached one on a hit, else `compile()`'s (which throws
   * invalid_request for a bad configuration: nothing is cached then), cached on a miss.
   */
  resolve(lookup: ConfigLookup, compile: () => CompiledConfig): CompiledConfig {
    if (lookup.kind === 'hit') return lookup.compiled;
    this.counters.compiles++;
    const compiled = compile();
    if (lookup.kind === 'miss') this.store(lookup.key, lookup.bytes, compiled);
    return compiled;
  }

  private store(key: string, bytes: number, compiled: CompiledConfig): void {
    if (bytes > this.options.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.totalBytes -= old.bytes;
    }
    this.entries.set(key, { compiled, bytes });
    this.totalBytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.options.maxEntries && this.totalBytes <= this.options.maxBytes) break;
      this.entries.delete(oldest);
      this.totalBytes -= entry.bytes;
    }
  }
}

// ---- protobuf wire format: where a length-delimited field lies (a tag is a varint, field number << 3 | wire type; wire types 0 varint, 1 fixed64, 2 length-delimited (varint length, then bytes), 5 fixed32) ----

/** The byte range of one length-delimited field: its tag starts at `start`, its value is `[valueStart, end)`. */
export interface FieldRange {
  start: number;
  valueStart: number;
  end: number;
}

/**
 * The one occurrence of length-delimited field `field` among the fields in `buf[from, to)`: `null` when the
 * field is absent, `undefined` when the bytes cannot be used as they are (the field occurs more than once,
 * which protobuf merges; a wrong wire type; groups; malformed or truncated bytes). Only top-level tags are
 * read: values are skipped by their length, never looked into.
 */
export function findField(buf: Buffer, field: number, from = 0, to = buf.length): FieldRange | null | undefined {
  let found: FieldRange | null = null;
  let pos = from;
  while (pos < to) {
    const start = pos;
    const tag = readVarint(buf, pos, to);
    if (!tag) return undefined;
    pos = tag.next;
    const number = Math.floor(tag.value / 8);
    const wireType = tag.value % 8;
    if (number === 0) return undefined;
    let end: number;
    let valueStart = pos;
    switch (wireType) {
      case 0: {
        const v = readVarint(buf, pos, to);
        if (!v) return undefined;
        end = v.next;
        break;
      }
      case 1:
        end = pos + 8;
        break;
      case 5:
        end = pos + 4;
        break;
      case 2: {
        const len = readVarint(buf, pos, to);
        if (!len) return undefined;
        valueStart = len.next;
        end = valueStart + len.value;
        break;
      }
      default:
        return undefined; // groups (3, 4) and invalid wire types
    }
    if (end > to) return undefined;
    if (number === field) {
      if (wireType !== 2 || found) return undefined;
      found = { start, valueStart, end };
    }
    pos = end;
  }
  return found;
}

/** A varint of up to 7 bytes (values below 2^49, exact as a double): every tag and length the service accepts. */
function readVarint(buf: Buffer, pos: number, to: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 7 && pos < to; i++) {
    const byte = buf[pos++] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, next: pos };
    scale *= 128;
  }
  return undefined;
}

/** `buf` without `[range.start, range.end)`: no copy when the range is at either end. */
export function withoutRange(buf: Buffer, range: FieldRange): Buffer {
  if (range.end === buf.length) return buf.subarray(0, range.start);
  if (range.start === 0) return buf.subarray(range.end);
  return Buffer.concat([buf.subarray(0, range.start), buf.subarray(range.end)]);
}

/** A length-delimited field `field` holding `value`, encoded (tag, length, bytes). */
export function lengthDelimited(field: number, value: Buffer): Buffer {
  const head: number[] = [];
  pushVarint(head, field * 8 + 2);
  pushVarint(head, value.length);
  return Buffer.concat([Buffer.from(head), value]);
}

function pushVarint(out: number[], value: number): void {
  let v = value;
  while (v >= 128) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}
