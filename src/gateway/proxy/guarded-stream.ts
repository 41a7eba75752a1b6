import { StringDecoder } from 'node:string_decoder';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { failReasonOfError, noteFailClosed } from '../../management/events/audit.hook';
import type { DetectionClient } from '../../shared/detection-client';
import { AppError } from '../../shared/errors';
import { repeatsJsonKey } from '../../shared/http/json-structure-guard';
import { copyResponseHeaders, discardBody } from '../../shared/http/upstream';
import type { DetectionPolicy } from '../../shared/policy';
import { recordStage } from './output-scan';
import { SseFormatError, SseParser, type SseEvent } from './sse';
import { StreamGuard, type StreamTexts } from './stream-guard';

/**
 * Relays an upstream SSE stream with output scanning, for any wire API (chat completions, the
 * sensor's messages): the events are parsed by the HTML standard's event-stream rules (sse.ts), each
 * is held by the stream guard until the text it carries is scanned, and released byte for byte.
 * When the verdict turns to blocked — or detection fails, the upstream breaks or its stream cannot be
 * parsed (fail closed, the reason noted for the audit event) — nothing more of the upstream is
 * released: the wire API's `blockedTail` is written and the stream ends.
 */
export interface GuardedStreamArgs {
  detection: DetectionClient;
  policy: DetectionPolicy;
  windowChars: number;
  request: FastifyRequest;
  reply: FastifyReply;
  upstream: Dispatcher.ResponseData;
  abort: AbortController;
  /** Which fields of an event carry text (the wire API's). */
  texts: StreamTexts;
  /** Sees every parsed event before the guard does (e.g. to keep the stream's identity). */
  observe?: (parsed: unknown) => void;
  /** The events that end a blocked stream, after the last released one. */
  blockedTail: (guard: StreamGuard) => string;
}

export async function relayGuardedStream(a: GuardedStreamArgs): Promise<FastifyReply> {
  const { reply } = a;
  const encoding = String(a.upstream.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    // Compressed bytes cannot be scanned as they pass, nor released event by event.
    discardBody(a.upstream.body);
    throw new AppError('internal_error', 'The upstream provider sent a compressed stream, which cannot be scanned', { code: 'upstream_invalid', status: 502 });
  }
  reply.status(a.upstream.statusCode);
  copyResponseHeaders(reply, a.upstream.headers);
  reply.raw.writeHead(a.upstream.statusCode, reply.getHeaders() as Record<string, string>);
  reply.hijack();
  const guard = new StreamGuard({
    detection: a.detection,
    policy: a.policy,
    windowChars: a.windowChars,
    texts: a.texts,
    release: (raw) => reply.raw.write(raw),
    flush: () => uncork(reply),
    requestId: String(a.request.id),
  });
  try {
    await pumpStream(a.upstream, guard, a.observe);
  } catch (err) {
    if (a.abort.signal.aborted) {
      // The client went away: the upstream request was aborted with it; nothing more to send.
      guard.cancel();
      reply.raw.end();
      return reply;
    }
    a.request.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'stream relay stopped');
    noteFailClosed(a.request, failReasonOfError(err));
    guard.blocked = true;
    guard.blockReason ||= err instanceof SseFormatError ? 'the upstream stream could not be parsed' : 'the output could not be scanned';
  } finally {
    guard.cancel();
  }
  recordStage(a.request, guard.explained(), guard.blocked);
  if (guard.blocked) {
    discardBody(a.upstream.body);
    reply.raw.write(a.blockedTail(guard));
  }
  reply.raw.end();
  return reply;
}

/**
 * Sends what was just written. Node's response corks its socket on a write and uncorks it on the next
 * tick, which comes only once the promise chain that wrote has run dry: here, the parse of the next
 * events and the set-up and first batch of a detection stream: 0.6–1.2 ms p50, 1–9 ms p90 from a
 * release to its socket write (npm run bench:ttfb on 2 shared cores).
 * Released events go out at once instead (a later uncork of Node's is then a no-op).
 */
function uncork(reply: FastifyReply): void {
  const socket = reply.raw.socket;
  if (socket && socket.writableCorked > 0) socket.uncork();
}

/**
 * Parses the upstream stream and feeds every event to the guard, which releases each one once
 * scanned. Stops early when the guard blocks.
 */
async function pumpStream(upstream: Dispatcher.ResponseData, guard: StreamGuard, observe?: (parsed: unknown) => void): Promise<void> {
  const parser = new SseParser();
  const feed = async (events: SseEvent[]) => {
    for (const event of events) {
      if (guard.blocked) return;
      const parsed = eventPayload(event);
      observe?.(parsed);
      await guard.push(event, parsed);
    }
  };
  // Not body.setEncoding: undici's decodes each read on its own, breaking a character split across reads.
  const decoder = new StringDecoder('utf8');
  for await (const chunk of upstream.body as AsyncIterable<Buffer | string>) {
    await feed(parser.push(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
    if (guard.blocked) return;
  }
  await feed([...parser.push(decoder.end()), ...parser.end()]);
  if (!guard.blocked) await guard.finish();
}

/**
 * The JSON an event carries: undefined for events without data and for `[DONE]`. Any other data
 * must be a JSON object; data that is not cannot be scanned, so the stream fails closed.
 */
function eventPayload(event: SseEvent): unknown {
  if (event.data === null || event.data === '[DONE]') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(event.data);
  } catch {
    throw new SseFormatError('the upstream sent a stream event whose data is not JSON'); // never the text itself
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SseFormatError('the upstream sent a stream event whose data is not a JSON object');
  // The scan would see the last copy of a repeated key, a client's parser may keep the first.
  if (repeatsJsonKey(event.data)) throw new SseFormatError('the upstream sent a stream event that repeats a JSON key');
  return parsed;
}
