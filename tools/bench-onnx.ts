import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { OnnxClassifierBackend } from '#src/detection/classifiers/backends/onnx-classifier-backend';
import { readOnnxModelDir } from '#src/detection/classifiers/backends/onnx-model-config';
import { buildMeanPoolModel, buildTransformerModel, wordPieceTokenizerJson, writeModelDir } from './onnx-synthetic-models';
import { randomWeights } from './onnx-graph-builder';
import { PACKAGE_ROOT } from './package-root';

/**
 * `npm run bench:onnx`: cost of the `onnx` backend per model size, on synthetic models with random
 * weights (the numbers depend on the architecture and its size, not on the weights):
 *   tiny   mean-pool (embedding → masked mean → linear), ~1M parameters;
 *   small  BERT-shaped encoder, 12 layers × 384 hidden, 128K vocabulary: the shape of DeBERTa-v3-xsmall
 *          (Prompt Guard 2 22M);
 *   base   BERT-shaped encoder, 12 layers × 768 hidden, 250K vocabulary: the shape of mDeBERTa-v3-base
 *          (Prompt Guard 2 86M). DeBERTa's disentangled attention costs more than this plain attention.
 * Each model runs in its own child process (clean resident memory): build → model.onnx in a temporary
 * directory → backend load time → latency of classify() on one 512-token window and on a 2,000-character
 * text (tokenise + chunk + run) → RSS. Writes bench/ONNX.md. BENCH_ONNX_MODELS=tiny,small limits the set;
 * BENCH_ONNX_THREADS=1,2 the intra-op thread counts tried.
 */

interface ModelPlan {
  name: string;
  shape: string;
  build(): { bytes: Uint8Array; params: number };
}

const VOCAB_WORDS = Array.from({ length: 2000 }, (_, i) => `w${i}`);

const PLANS: ModelPlan[] = [
  {
    name: 'tiny',
    shape: 'mean-pool, 30,522 × 32 embedding, linear head',
    build: () => buildMeanPoolModel({ vocab: 30522, dim: 32, embeddings: randomWeights(30522 * 32, 0.1, 7), weights: randomWeights(64, 0.5, 8), bias: new Float32Array(2) }),
  },
  {
    name: 'small',
    shape: 'encoder 12 layers × 384 hidden, 6 heads, FFN 1,536, vocab 128,100',
    build: () => buildTransformerModel({ vocab: 128100, hidden: 384, layers: 12, heads: 6, ffn: 1536, maxPositions: 512, labels: 2 }),
  },
  {
    name: 'base',
    shape: 'encoder 12 layers × 768 hidden, 12 heads, FFN 3,072, vocab 250,105',
    build: () => buildTransformerModel({ vocab: 250105, hidden: 768, layers: 12, heads: 12, ffn: 3072, maxPositions: 512, labels: 2 }),
  },
];

interface Result {
  model: string;
  shape: string;
  params: number;
  fileMb: number;
  threads: number;
  loadMs: number;
  window512: Stats;
  text2k: Stats & { tokens: number };
  rssMb: number;
  rssBeforeMb: number;
}

interface Stats {
  n: number;
  /** The fastest run: the best estimate of the uncontended cost on a shared machine. */
  min: number;
  p50: number;
  p99: number;
}

interface Built {
  dir: string;
  params: number;
  fileMb: number;
}

/** Parent: builds a model directory (the weights never live in the measuring process). */
function buildModel(plan: ModelPlan): Built {
  const dir = mkdtempSync(join(os.tmpdir(), `bench-onnx-${plan.name}-`));
  const built = plan.build();
  writeModelDir(dir, {
    model: built.bytes,
    tokenizer: wordPieceTokenizerJson(VOCAB_WORDS),
    config: { labels: [{ name: 'BENIGN', type: null }, { name: 'MALICIOUS', type: 'prompt_attack' }], max_length: 512, activation: 'softmax' },
  });
  return { dir, params: built.params, fileMb: mb(built.bytes.byteLength) };
}

/** Child: loads one model directory with one thread count and measures it. */
async function measureOne(plan: ModelPlan, model: Built, threads: number): Promise<Result> {
  const rssBeforeMb = mb(process.memoryUsage().rss);
  const { dir, params, fileMb } = model;
  const started = performance.now();
  const backend = new OnnxClassifierBackend({ spec: readOnnxModelDir(dir, ['prompt_attack']), types: ['prompt_attack'], threads, maxConcurrency: 1 });
  await backend.ready;
  const loadMs = performance.now() - started;
  const signal = new AbortController().signal;
  const window = Array.from({ length: 510 }, (_, i) => VOCAB_WORDS[(i * 7) % VOCAB_WORDS.length]).join(' ');
  if (backend.chunker.chunks(window)[0]?.length !== 512) throw new Error('the 512-token probe is not 512 tokens');
  const window512 = await timeIt(() => backend.classify(window, signal));
  const prose = proseOf(2000);
  const tokens = backend.chunker.chunks(prose).reduce((n, c) => n + c.length, 0);
  const text2k = { ...(await timeIt(() => backend.classify(prose, signal))), tokens };
  const rssMb = mb(process.memoryUsage().rss);
  await backend.close();
  return { model: plan.name, shape: plan.shape, params, fileMb, threads, loadMs, window512, text2k, rssMb, rssBeforeMb };
}

/** At least 5 and at most 300 timed runs, within ~10 s, after 2 warm-up runs. */
async function timeIt(fn: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < 2; i++) await fn();
  const samples: number[] = [];
  const deadline = performance.now() + 10_000;
  while (samples.length < 300 && (samples.length < 5 || performance.now() < deadline)) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)] as number;
  return { n: samples.length, min: samples[0] as number, p50: at(0.5), p99: at(0.99) };
}

function proseOf(length: number): string {
  const words = 'the model reads a message from the user and decides whether it tries to change its instructions or not'.split(' ');
  let out = '';
  for (let i = 0; out.length < length; i++) out += `${words[i % words.length]}${i % 13 === 12 ? '. ' : ' '}`;
  return out.slice(0, length);
}

function mb(bytes: number): number {
  return Math.round(bytes / 1048576);
}

function runChild(plan: ModelPlan, model: Built, threads: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    const args = ['--one', plan.name, JSON.stringify(model), String(threads)];
    const child = fork(__filename, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (m) => resolve(m as Result));
    child.once('exit', (code) => code !== 0 && reject(new Error(`bench child ${plan.name} exited with ${code}`)));
  });
}

function report(results: Result[]): string {
  const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(0));
  const rows = results.map(
    (r) =>
      `| ${r.model} | ${r.shape} | ${(r.params / 1e6).toFixed(1)}M | ${r.fileMb} | ${r.threads} | ${ms(r.loadMs)} | ` +
      `${ms(r.window512.min)} / ${ms(r.window512.p50)} / ${ms(r.window512.p99)} (n=${r.window512.n}) | ` +
      `${ms(r.text2k.min)} / ${ms(r.text2k.p50)} / ${ms(r.text2k.p99)} (${r.text2k.tokens} tokens, n=${r.text2k.n}) | ${r.rssMb} (${r.rssBeforeMb} before) |`,
  );
  return [
    '| model | architecture | parameters | model.onnx MB | threads | load ms | 512-token window min / p50 / p99 ms | 2,000-char text min / p50 / p99 ms | RSS MB |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const START = '<!-- bench:onnx results start -->';
const END = '<!-- bench:onnx results end: the text outside the markers is written by hand and kept -->';

/** Replaces the generated block between the markers of bench/ONNX.md (appended when absent). */
export function replaceResults(current: string, block: string): string {
  const from = current.indexOf(START);
  const to = current.indexOf(END);
  const generated = `${START}\n${block.trimEnd()}\n${END}`;
  if (from < 0 || to < from) return `${current.trimEnd()}\n\n${generated}\n`;
  return current.slice(0, from) + generated + current.slice(to + END.length);
}

async function main(): Promise<void> {
  const wanted = (process.env.BENCH_ONNX_MODELS ?? 'tiny,small,base').split(',').map((s) => s.trim());
  const threads = (process.env.BENCH_ONNX_THREADS ?? '1,2').split(',').map(Number);
  const results: Result[] = [];
  for (const plan of PLANS.filter((p) => wanted.includes(p.name))) {
    const model = buildModel(plan);
    for (const t of threads) {
      const r = await runChild(plan, model, t);
      const w = r.window512;
      console.log(`${r.model} threads=${t}: load ${r.loadMs.toFixed(0)} ms, 512 tokens min ${w.min.toFixed(1)} p50 ${w.p50.toFixed(1)} p99 ${w.p99.toFixed(1)} ms, 2 KB p50 ${r.text2k.p50.toFixed(1)} ms, RSS ${r.rssMb} MB`);
      results.push(r);
    }
    rmSync(model.dir, { recursive: true, force: true });
  }
  const table = report(results);
  const header = `Measured ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, onnxruntime-node ${require('onnxruntime-node/package.json').version}.`;
  const file = join(PACKAGE_ROOT, 'bench', 'ONNX.md');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# onnx backend: cost per model size (npm run bench:onnx)\n';
  writeFileSync(file, replaceResults(current, `${header}\n\n${table}`));
  console.log(`\n${header}\n\n${table}`);
}

if (process.argv[2] === '--one') {
  const plan = PLANS.find((p) => p.name === process.argv[3]) as ModelPlan;
  measureOne(plan, JSON.parse(process.argv[4] as string) as Built, Number(process.argv[5]))
    .then((r) => process.send?.(r, () => process.exit(0)))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
} else if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
