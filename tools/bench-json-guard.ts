import { performance } from 'node:perf_hooks';
import { findJsonStructureProblem } from '#src/shared/http/json-structure-guard';

/**
 * `npm run bench:json`: what the duplicate-key / depth pass adds to parsing a JSON request body, next
 * to the parse itself (JSON.parse; fastify's parser adds a __proto__ / constructor check on top). Three ~1 MB
 * bodies: a chat with many mid-sized messages, one huge string, and a structure-heavy body (many tiny
 * objects: the worst case for the pass, which skips string contents with indexOf). Median of 40 runs.
 */

const TARGET = 1024 * 1024;

function chat(): string {
  const messages = [];
  for (let i = 0; JSON.stringify(messages).length < TARGET; i++) {
    messages.push({ role: i % 2 ? 'assistant' : 'user', content: `Message ${i}: ${'lorem ipsum dolor sit amet, "quoted" \\ text '.repeat(12)}` });
  }
  return JSON.stringify({ model: 'gpt-4o-mini', messages });
}

function hugeString(): string {
  return JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(TARGET) }] });
}

function structureHeavy(): string {
  const properties: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(properties).length < TARGET; i++) properties[`p${i}`] = { type: 'integer', minimum: 0, items: [1, 2, { a: 1 }] };
  return JSON.stringify({ model: 'gpt-4o-mini', tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties } } }] });
}

function median(fn: () => void, runs = 40): number {
  for (let i = 0; i < 5; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function main(): void {
  console.log('| body | bytes | JSON.parse ms | duplicate-key + depth pass ms | pass / parse |');
  console.log('|---|---|---|---|---|');
  for (const [name, text] of [['chat, many messages', chat()], ['one 1 MB string', hugeString()], ['structure-heavy (tool schema)', structureHeavy()]] as const) {
    const parse = median(() => JSON.parse(text));
    const pass = median(() => {
      if (findJsonStructureProblem(text, 64)) throw new Error('unexpected problem');
    });
    console.log(`| ${name} | ${Buffer.byteLength(text)} | ${parse.toFixed(2)} | ${pass.toFixed(2)} | ${(pass / parse).toFixed(2)} |`);
  }
}

main();
