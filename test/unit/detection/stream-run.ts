import type { DetectionEngine } from '../../../src/detection/engine';
import { StreamScanner, type StreamScannerOptions, type StreamUpdate } from '../../../src/detection/stream-scanner';

/** Pushes `chunks` through a new StreamScanner, then finishes it: every update, the last one, and all findings. */
export async function scanStream(engine: DetectionEngine, chunks: string[], options: StreamScannerOptions) {
  const scanner = new StreamScanner(engine, options);
  const updates: StreamUpdate[] = [];
  for (const chunk of chunks) {
    const u = await scanner.push(chunk);
    if (u) updates.push(u);
  }
  const last = await scanner.finish();
  updates.push(last);
  return { scanner, updates, last, findings: updates.flatMap((u) => u.findings) };
}

/** `text` cut into pieces of `size` characters. */
export const chunked = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
