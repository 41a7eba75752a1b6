/**
 * Tokenises a window of text for the onnx backend and cuts it into model-sized chunks.
 *
 * The text is encoded once without special tokens; the ids are cut into pieces of at most
 * `maxLength - specials` tokens, consecutive pieces sharing `stride` tokens (so a phrase cut by one
 * boundary is whole in the next piece), and each piece gets the model's own special tokens back
 * ([CLS] … [SEP], <s> … </s>, …), learnt once by comparing an encoding with and without them. The
 * caller scores every chunk and keeps the highest score per label.
 */

/** The part of a tokenizer this needs (`@huggingface/tokenizers` Tokenizer satisfies it). */
export interface TextEncoder {
  encode(text: string, options?: { add_special_tokens?: boolean }): { ids: number[] };
}

export class TokenChunker {
  readonly prefix: readonly number[];
  readonly suffix: readonly number[];
  private readonly body: number;
  private readonly step: number;

  constructor(
    private readonly tokenizer: TextEncoder,
    readonly maxLength: number,
    stride: number,
  ) {
    const { prefix, suffix } = specialTokensOf(tokenizer);
    this.prefix = prefix;
    this.suffix = suffix;
    this.body = maxLength - prefix.length - suffix.length;
    if (this.body < 2) throw new Error(`max_length ${maxLength} leaves no room for text after the special tokens`);
    this.step = Math.max(1, this.body - Math.min(stride, this.body - 1));
  }

  /** Token ids per chunk, special tokens included; an empty text is one chunk of special tokens only. */
  chunks(text: string): number[][] {
    const ids = this.tokenizer.encode(text, { add_special_tokens: false }).ids;
    const out: number[][] = [];
    for (let start = 0; ; start += this.step) {
      const end = Math.min(ids.length, start + this.body);
      out.push([...this.prefix, ...ids.slice(start, end), ...this.suffix]);
      if (end >= ids.length) break;
    }
    return out;
  }
}

/** The ids a tokenizer adds before and after a single sequence. */
export function specialTokensOf(tokenizer: TextEncoder): { prefix: number[]; suffix: number[] } {
  const probe = 'a b';
  const inner = tokenizer.encode(probe, { add_special_tokens: false }).ids;
  const full = tokenizer.encode(probe, { add_special_tokens: true }).ids;
  for (let at = 0; at + inner.length <= full.length; at++) {
    if (inner.every((id, i) => full[at + i] === id)) {
      return { prefix: full.slice(0, at), suffix: full.slice(at + inner.length) };
    }
  }
  // The post-processor rewrites the sequence itself: take no special tokens rather than guess.
  return { prefix: [], suffix: [] };
}
