import { chunkTexts, readChatRequest, responseFields } from '../../src/gateway/proxy/openai-chat.schema';
import { readResponsesRequest, responsesOutputFields, responsesStreamTexts } from '../../src/gateway/proxy/openai-responses.schema';
import { messagesResponseFields, messagesStreamTexts } from '../../src/sensor/messages-response';
import { readMessagesRequest } from '../../src/sensor/messages.schema';
import { responsesStreamEvents } from './responses-fields';
import type { FieldRow, Json } from './table';

/** Each wire's extractor, over what a row builds: the fields it scans, with their JSON paths. */
export type Extract = (body: Json) => Array<{ path: string; text: string }>;

export const chatRequestFields: Extract = (b) => readChatRequest(b).fields;
export const chatResponseFields: Extract = (b) => responseFields(b);
/** A stream row builds chunk choices; each is one chunk's choice 0. */
export const chatStreamFields: Extract = (b) =>
  (b.choices as Json[]).flatMap((choice) => chunkTexts({ choices: [{ index: 0, ...choice }] }).map((p) => ({ path: p.path, text: p.text })));
export const messagesRequestFields: Extract = (b) => readMessagesRequest(b).fields;

/** The paths at which `t` (or, split across stream pieces, a piece of it) lands when `row` carries it. */
export function pathsOf(row: FieldRow, extract: Extract, t: string): string[] {
  const paths = extract(row.build(t))
    .filter((f) => f.text.includes(t) || (f.text.length >= 3 && t.includes(f.text)) || f.text.includes(t.slice(0, 6)))
    .map((f) => f.path);
  return [...new Set(paths)];
}

export const messagesResponseFieldsOf: Extract = (b) => messagesResponseFields(b);
/** A messages stream row builds events (and maybe its message_start). */
export const messagesStreamFields: Extract = (b) => [b.start, ...(b.events as Json[])].filter(Boolean).flatMap((e) => messagesStreamTexts(e).map((p) => ({ path: p.path, text: p.text })));

export const responsesRequestFields: Extract = (b) => readResponsesRequest(b).fields;
export const responsesResponseFields: Extract = (b) => responsesOutputFields(b);
/** A Responses stream row builds events (and maybe the output response.completed carries). */
export const responsesStreamFields: Extract = (b) => {
  const texts = responsesStreamTexts({ snapshot: null, sequence: 0 });
  return responsesStreamEvents(b).flatMap((e) => texts(e).map((p) => ({ path: p.path, text: p.text })));
};
