import type { DetectionLogger, StartedDetectionServer } from './server';

/**
 * The detection service in a worker thread (`all` mode: its own core, the same gRPC hop). Apart from
 * server.ts so the main thread that starts the worker does not load the engine, its detectors and their
 * tables: only the worker loads them (once per process, not once per thread).
 */

const DETECTION_THREAD_YOUNG_GENERATION_MB = 12;
/** Heap growth since its last collection above which the idle detection thread collects (idle-reclaim.ts). */
const DETECTION_RECLAIM_MIN_GROWTH_BYTES = 16 * 1024 * 1024;

/** Messages between the main thread and the detection worker. */
type ToWorker = { type: 'close'; graceMs: number } | { type: 'drain' } | { type: 'metrics'; id: number };
type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'closed' }
  | { type: 'metrics'; id: number; text: string };

/** Longest the main thread waits for the worker's metrics text (a scrape leaves them out past it). */
const METRICS_TIMEOUT_MS = 2000;

export interface DetectionWorkerData {
  role: 'detection-worker';
  /** The service configuration (a plain object: loadConfig's result). */
  config: import('../shared/config').Config;
  /** The Unix domain socket to listen on as well (see StartDetectionServerOptions.socketPath). */
  socketPath?: string;
}

/**
 * Starts the detection service in a worker thread of this process: the engine, the classifier
 * backends and the gRPC server run there, on their own event loop (and so their own core), and the
 * gateway and sensor still reach it over gRPC at the returned port, exactly as a separate process.
 * Needs the compiled JavaScript (a worker cannot load TypeScript sources).
 */
export async function startDetectionWorker(o: {
  config: import('../shared/config').Config;
  logger: DetectionLogger;
  socketPath?: string;
}): Promise<{ port: number; drain(): void; close(graceMs?: number): Promise<void>; metrics(): Promise<string> }> {
  const { Worker } = await import('node:worker_threads');
  const data: DetectionWorkerData = { role: 'detection-worker', config: o.config, ...(o.socketPath !== undefined && { socketPath: o.socketPath }) };
  const worker = new Worker(`require(${JSON.stringify(__filename)}).runDetectionWorker()`, {
    eval: true,
    workerData: data,
    // V8 lets a thread's young generation grow to 48 MB: with the main thread's and the database
    // thread's that is most of the process's growth under load. Scans allocate short-lived strings and
    // arrays; 12 MB keeps scavenges cheap (bench/RESULTS.md, "Start-up and memory").
    resourceLimits: { maxYoungGenerationSizeMb: DETECTION_THREAD_YOUNG_GENERATION_MB },
  });
  let closing = false;
  const port = await new Promise<number>((resolve, reject) => {
    const onMessage = (m: FromWorker) => {
      if (m.type === 'listening') resolve(m.port);
      else if (m.type === 'failed') reject(new Error(m.message));
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`detection worker exited (${code}) before listening`)));
  });
  worker.removeAllListeners('error');
  worker.removeAllListeners('exit');
  worker.on('error', (err) => o.logger.error({ err }, 'detection worker failed'));
  // Scrapes: the worker's registry text, by request id (a scrape that gets no answer in time leaves it out).
  let nextMetricsId = 0;
  const metricsWaiters = new Map<number, (text: string) => void>();
  worker.on('message', (m: FromWorker) => {
    if (m.type !== 'metrics') return;
    metricsWaiters.get(m.id)?.(m.text);
    metricsWaiters.delete(m.id);
  });
  worker.on('exit', (code) => {
    // Requests then fail closed (503 detection_unavailable) and /health reports detection down.
    if (!closing) o.logger.error({ code }, 'detection worker exited unexpectedly: detection is unavailable');
  });
  return {
    port,
    drain: () => worker.postMessage({ type: 'drain' } satisfies ToWorker),
    metrics: () =>
      new Promise<string>((resolve, reject) => {
        if (closing) return reject(new Error('detection worker is closing'));
        const id = nextMetricsId++;
        const timer = setTimeout(() => {
          metricsWaiters.delete(id);
          reject(new Error('detection worker did not send its metrics in time'));
        }, METRICS_TIMEOUT_MS);
        metricsWaiters.set(id, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
        worker.postMessage({ type: 'metrics', id } satisfies ToWorker);
      }),
    close: async (graceMs = 5000) => {
      closing = true;
      const closed = new Promise<void>((resolve) => {
        worker.on('message', (m: FromWorker) => m.type === 'closed' && resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage({ type: 'close', graceMs } satisfies ToWorker);
      const timer = setTimeout(() => void worker.terminate(), graceMs + 2000);
      await closed;
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}

/** The worker thread's side of startDetectionWorker (run through `eval`; not for direct use). */
export function runDetectionWorker(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const data = workerData as DetectionWorkerData;
  if (!parentPort || data?.role !== 'detection-worker') throw new Error('runDetectionWorker runs in the detection worker only');
  const port = parentPort;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createLogger } = require('../shared/logger') as typeof import('../shared/logger');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { installClassifierBackends } = require('./classifiers/install') as typeof import('./classifiers/install');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { detectionServerOptions, startDetectionServer } = require('./server') as typeof import('./server');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DetectionMetrics } = require('./metrics') as typeof import('./metrics');
  const logger = createLogger({ level: data.config.LOG_LEVEL }).child({ name: 'detection' });
  const post = (m: FromWorker) => port.postMessage(m);
  const start = async () => {
    const classifiers = await installClassifierBackends(data.config);
    // The process's metrics (CPU, memory) are the main thread's registry: only detection's own here.
    const metrics = new DetectionMetrics();
    metrics.watchClassifierPool(() => classifiers.poolStats());
    port.on('message', (m: ToWorker) => {
      if (m.type !== 'metrics') return;
      void metrics.text().then(
        (text) => post({ type: 'metrics', id: m.id, text }),
        () => post({ type: 'metrics', id: m.id, text: '' }),
      );
    });
    let server: StartedDetectionServer;
    try {
      server = await startDetectionServer({ ...detectionServerOptions(data.config, data.socketPath), logger, metrics });
    } catch (err) {
      await classifiers.close();
      throw err;
    }
    port.on('message', (m: ToWorker) => {
      if (m.type === 'drain') return server.drain();
      if (m.type !== 'close') return;
      void server
        .close(m.graceMs)
        .then(() => classifiers.close())
        .catch((err: unknown) => logger.error({ err }, 'detection worker shutdown failed'))
        .finally(() => post({ type: 'closed' }));
    });
    if (data.config.MEMORY_RECLAIM_IDLE_MS > 0) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { startIdleReclaim } = require('../shared/idle-reclaim') as typeof import('../shared/idle-reclaim');
      // 16 MB, not the main thread's 32: this heap starts at ~38 MB and a burst (1 MB texts, 1,024 streams)
      // grew it by 29–34 MB, so at 32 MB the collection ran after some bursts and not others
      // (bench:memory: 67 MB committed at rest, ~40 MB of it live).
      const reclaim = startIdleReclaim({ idleMs: data.config.MEMORY_RECLAIM_IDLE_MS, minGrowthBytes: DETECTION_RECLAIM_MIN_GROWTH_BYTES });
      port.on('message', (m: ToWorker) => m.type === 'close' && reclaim.stop());
    }
    post({ type: 'listening', port: server.port });
  };
  start().catch((err: unknown) => post({ type: 'failed', message: err instanceof Error ? err.message : String(err) }));
}
