import type { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { failReasonOfResult, noteFailClosed } from '../../management/events/audit.hook';
import type { DetectionClient, DetectResult } from '../../shared/detection-client';
import { repeatsJsonKey } from '../../shared/http/json-structure-guard';
import { AppError } from '../../shared/errors';
import { discardBody, upstreamRepeatsKeyError, upstreamTransportError } from '../../shared/http/upstream';
import { setRiskHeaders, unscannedOf } from '../../shared/http/risk-headers';
import { childPath, indexPath, joinFields, type TextField } from '../../shared/explain/field-layout';
import { CategoryMatches, explainVerdict, type ExplainedCategory } from '../../shared/explain/verdict-matches';
import type { DetectionPolicy, Direction, Unscannable } from '../../shared/policy';
import { noteUnscannedContent } from '../../shared/http/unscanned-content';

/**
 * One scan stage of a proxied request (its input, the upstream's answer), shared by the chat
 * proxy and the sensor: scan the fields, fold the findings into the audit record, note a
 * fail-closed reason. Also what both need to scan an upstream body: bounded reading, decoding of
 * the content encodings a client may have asked for, and the texts of an error body.
 */

/**
 * Folds one stage's categories (input, output) into the audit record: one finding per type, its highest
 * confidence and that stage's action, and the matches of both stages (bounded, highest scores first).
 */
export function recordStage(request: FastifyRequest, categories: readonly ExplainedCategory[], blocked: boolean): void {
  const audit = request.audit ?? {};
  const seen = new Map((audit.findings ?? []).map((f) => [f.type, f]));
  for (const c of categories) {
    const prev = seen.get(c.type);
    const matches = new CategoryMatches().addMatches(c.type, prev?.matches ?? []).addMatches(c.type, c.matches).of(c.type);
    const best = !prev || c.confidence > prev.confidence ? { type: c.type, confidence: c.confidence, action: c.action } : prev;
    seen.set(c.type, { type: best.type, confidence: best.confidence, action: best.action, matches });
  }
  audit.findings = [...seen.values()];
  audit.blocked = (audit.blocked ?? false) || blocked;
  request.audit = audit;
}

/** Scans `fields` (joined into one Detect text) in `direction`, records the stage, returns the verdict. */
export async function scanStage(
  detection: DetectionClient,
  request: FastifyRequest,
  o: { direction: Direction; policy: DetectionPolicy; fields: TextField[]; signal?: AbortSignal },
): Promise<DetectResult> {
  const { text, layout } = joinFields(o.fields);
  // The input scan is a request's first detection call (refused with 503 detection_overloaded when the
  // admission queue is full); an output scan belongs to a request already admitted, so it is queued.
  const admitted = o.direction === 'output';
  const verdict = await detection.detect({ text, direction: o.direction, policy: o.policy, admitted, signal: o.signal, requestId: String(request.id) });
  recordStage(request, explainVerdict(verdict, (start, end) => layout.locate(start, end)), verdict.blocked);
  noteFailClosed(request, failReasonOfResult(verdict));
  return verdict;
}

/**
 * The request's input stage, as every proxy route runs it: its texts scanned with the input policy (the
 * request's first detection call: 503 detection_overloaded when detection is at capacity), the X-Risk-*
 * headers of that verdict, the content no detector can read noted (and refused when the policy says so);
 * a block (`deny`, the route's own error) takes precedence over the unscannable refusal. Returns the verdict.
 */
export async function scanInputStage(
  detection: DetectionClient,
  request: FastifyRequest,
  reply: FastifyReply,
  o: {
    policy: { detection: DetectionPolicy; unscannable: Unscannable };
    fields: TextField[];
    /** JSON paths of content no detector can read. */
    unscanned: readonly string[];
    signal: AbortSignal;
    errorType: 'security_block' | 'permission_error';
    deny: (verdict: DetectResult) => AppError;
  },
): Promise<DetectResult> {
  const input = await scanStage(detection, request, { direction: 'input', policy: o.policy.detection, fields: o.fields, signal: o.signal });
  setRiskHeaders(reply, { blocked: input.blocked, categories: input.categories, unscanned: unscannedOf(input) });
  const unscannable = noteUnscannedContent(request, reply, o.unscanned, o.policy, o.errorType);
  if (input.blocked) throw o.deny(input);
  if (unscannable) throw unscannable;
  return input;
}

/** Whether the policy scans what the upstream answers (policy mode `O` or `IO`). */
export const scansOutput = (policy: DetectionPolicy): boolean => policy.policyMode !== 'I';

/** X-Risk-* of an answer whose output was scanned: blocked by the output verdict, categories of both stages. */
export function setOutputRiskHeaders(reply: FastifyReply, input: DetectResult, output: DetectResult): void {
  const categories = [...input.categories, ...output.categories];
  setRiskHeaders(reply, { blocked: output.blocked, categories, unscanned: [...new Set([...unscannedOf(input), ...unscannedOf(output)])] });
}

/** An upstream JSON answer larger than this is refused (502) rather than held in memory to be scanned. */
export const MAX_UPSTREAM_BODY = 64 * 1024 * 1024;
/** Upstream error bodies are scanned whole up to this size. */
export const MAX_ERROR_BODY = 1024 * 1024;

const tooLarge = () => new AppError('internal_error', 'The upstream response is too large to be scanned', { code: 'upstream_too_large', status: 502 });
const undecodable = (what: string) => new AppError('internal_error', `The upstream provider sent ${what}`, { code: 'upstream_invalid', status: 502 });

/**
 * Reads an upstream body up to `limit` bytes; null (and the rest discarded) when it is longer. A body
 * that breaks off (reset, body timeout) is the upstream's failure: 502 / 504, not a 500.
 */
export async function readBounded(body: Readable, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer | string>) {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > limit) {
        discardBody(body);
        return null;
      }
      chunks.push(b);
    }
  } catch (err) {
    throw upstreamTransportError(err);
  }
  return Buffer.concat(chunks);
}

/**
 * The bytes of a body sent with `content-encoding` (the sensor forwards the client's Accept-Encoding):
 * decoded to be scanned, while the original bytes are what is relayed. Decoding is bounded by `limit`
 * (a small compressed body cannot expand without end); an unknown or broken encoding is a 502.
 */
export function decodeBody(raw: Buffer, encoding: string | string[] | undefined, limit: number): Buffer {
  const codings = String(encoding ?? '').toLowerCase().split(',').map((c) => c.trim()).filter((c) => c !== '' && c !== 'identity');
  let out = raw;
  try {
    for (const coding of codings.reverse()) {
      const opts = { maxOutputLength: limit };
      if (coding === 'gzip' || coding === 'x-gzip') out = gunzipSync(out, opts);
      else if (coding === 'deflate') out = inflateSync(out, opts);
      else if (coding === 'br') out = brotliDecompressSync(out, opts);
      else throw undecodable(`a response in an encoding that cannot be scanned (${coding.slice(0, 32)})`);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(); // past maxOutputLength
    throw undecodable('a compressed response that could not be decoded');
  }
  if (out.length > limit) throw tooLarge();
  return out;
}

/** Every string value of a JSON value, at any depth, with its path (the object keys are structure). */
export function jsonStringFields(value: unknown, path: string, out: TextField[] = []): TextField[] {
  if (typeof value === 'string') {
    if (value.length > 0) out.push({ path: path || '$', text: value });
  } else if (Array.isArray(value)) value.forEach((v, i) => jsonStringFields(v, indexPath(path, i), out));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) jsonStringFields(v, childPath(path, k), out);
  }
  return out;
}

/**
 * The texts of an upstream body relayed byte for byte: a JSON body's fields as `fieldsOf` reads them; a
 * body that is not JSON is scanned as one text (`body`). A JSON body that repeats a key is refused (502
 * upstream_invalid): the scan would see the last copy, a client reading the relayed body may keep the first.
 */
export function relayedBodyFields(text: string, fieldsOf: (parsed: unknown) => TextField[]): TextField[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.length > 0 ? [{ path: 'body', text }] : [];
  }
  if (repeatsJsonKey(text)) throw upstreamRepeatsKeyError();
  return fieldsOf(parsed);
}

/** What an upstream error body says, to scan with the output policy (it may echo the caller's content): every string. */
export const errorBodyFields = (text: string): TextField[] => relayedBodyFields(text, (parsed) => jsonStringFields(parsed, ''));
