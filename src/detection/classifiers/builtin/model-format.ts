import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { HEADS } from './taxonomy';

/**
 * The committed artefact (model/model.json): hashing parameters, the heuristic signal ids in feature
 * order, one entry per head (bias, weight scale, calibration), and all weights as one int8 matrix
 * (row = feature, column = head, so one pass over a text's features updates every head), gzip-ed and
 * base64-encoded. A weight is q · scale of its head, q in -127..127.
 */

export const ARTEFACT_FORMAT = 'builtin-linear/1';

const headSchema = z.object({
  name: z.enum(HEADS),
  bias: z.number(),
  scale: z.number().positive(),
  calibration: z.object({
    knots: z
      .tuple([z.number(), z.number(), z.number(), z.number()])
      .refine((k) => k[0] < k[1] && k[1] < k[2] && k[2] < k[3], 'calibration knots must increase'),
  }),
});

export const artefactSchema = z.object({
  format: z.literal(ARTEFACT_FORMAT),
  hashing: z.object({
    bits: z.number().int().min(10).max(22),
    seed: z.number().int(),
    charMin: z.number().int().min(1),
    charMax: z.number().int().min(1),
    wordMax: z.number().int().min(1).max(2),
    charWeight: z.number(),
    wordWeight: z.number(),
    keepPunctuation: z.boolean(),
  }),
  signals: z.array(z.string()),
  heads: z.array(headSchema).min(1),
  weights: z.string(),
});

export type BuiltinArtefact = z.infer<typeof artefactSchema>;
export type HeadSpec = z.infer<typeof headSchema>;

/** Quantises per head (scale = max |w| / 127) and packs the interleaved matrix. */
export function packWeights(perHead: readonly Float64Array[]): { data: string; scales: number[] } {
  const heads = perHead.length;
  const dimension = (perHead[0] as Float64Array).length;
  const scales = perHead.map((w) => {
    let max = 0;
    for (const v of w) max = Math.max(max, Math.abs(v));
    return max > 0 ? max / 127 : 1;
  });
  const q = new Int8Array(dimension * heads);
  for (let h = 0; h < heads; h++) {
    const w = perHead[h] as Float64Array;
    const s = scales[h] as number;
    for (let j = 0; j < dimension; j++) q[j * heads + h] = Math.max(-127, Math.min(127, Math.round((w[j] as number) / s)));
  }
  const gz = gzipSync(Buffer.from(q.buffer, q.byteOffset, q.byteLength), { level: 9 });
  return { data: gz.toString('base64'), scales };
}

export function unpackWeights(data: string, dimension: number, heads: number): Int8Array {
  const raw = gunzipSync(Buffer.from(data, 'base64'));
  if (raw.length !== dimension * heads) throw new Error(`builtin model: expected ${dimension * heads} weights, found ${raw.length}`);
  return new Int8Array(raw.buffer, raw.byteOffset, raw.length);
}
