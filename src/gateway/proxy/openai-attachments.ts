import { inlineFileContent, parseDataUrl } from '../../shared/content/file-content';
import type { TextField } from '../../shared/explain/field-layout';

/**
 * Request content parts of the chat-completions API besides text and refusal: a file part's filename
 * and inline data (decoded and scanned when it is text, file-content.ts); what no detector can read
 * (image_url, input_audio, file_id, a non-text file, a part type not known here) is reported in
 * `unscanned` by its JSON path.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function partAttachments(part: Record<string, Json>, at: string, out: TextField[], unscanned: string[]): void {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return;
    case 'file':
      return fileTexts(part.file, `${at}.file`, out, unscanned);
    case 'image_url':
    case 'input_audio':
      return void unscanned.push(`${at}.${part.type}`);
    default:
      // An untyped text part was read above; anything else is a part kind nothing here can read.
      if (typeof part.text !== 'string' && typeof part.refusal !== 'string') unscanned.push(at);
  }
}

/** `{file_data: "data:<type>;base64,..." | "<base64>", file_id, filename}` of a file part. */
export function fileTexts(file: Json | undefined, path: string, out: TextField[], unscanned: string[]): void {
  if (!isObj(file)) return;
  const filename = typeof file.filename === 'string' ? file.filename : undefined;
  if (filename) out.push({ path: `${path}.filename`, text: filename });
  if (typeof file.file_data === 'string' && file.file_data.length > 0) {
    const url = parseDataUrl(file.file_data);
    const data = url ? { data: url.data, base64: url.base64, mediaType: url.mediaType } : { data: file.file_data, base64: true, mediaType: '' };
    inlineFileContent({ path: `${path}.file_data`, filename, ...data }, out, unscanned);
  }
  if (typeof file.file_id === 'string') unscanned.push(`${path}.file_id`);
}
