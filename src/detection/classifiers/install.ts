import type { Config } from '../../shared/config';
import { buildClassifierBackends } from './backends/backend-factory';
import { parseClassifierBackendsConfig } from './backends/classifier-config';
import type { ClassifierBackend } from './backend';
import { createBuiltinBackend } from './builtin/builtin-backend';
import { createPooledBuiltinBackend, type ClassifierPoolStats, type PooledClassifierBackend } from './builtin/builtin-pool';
import { configureClassifierRouter } from './classifier-detector';
import { ClassifierRouter } from './router';

/**
 * Builds the classifier backends the deployment configured (CLASSIFIER_BACKENDS and the backend
 * settings) and installs a router over them for the classifier detectors. A misconfiguration throws
 * at start-up (ConfigError naming the variable), never on a request; an onnx model is loaded before
 * this resolves.
 */
export interface InstalledClassifiers {
  close(): Promise<void>;
  /** The builtin classifier's worker pool, when it has one (CLASSIFIER_WORKERS > 0) and it was used. */
  poolStats(): ClassifierPoolStats | undefined;
}

export async function installClassifierBackends(config: Config): Promise<InstalledClassifiers> {
  let pooled: PooledClassifierBackend | undefined;
  const builtin = (): ClassifierBackend => {
    if (config.CLASSIFIER_WORKERS === 0) return createBuiltinBackend();
    pooled ??= createPooledBuiltinBackend({
      size: config.CLASSIFIER_WORKERS,
      minWindows: config.CLASSIFIER_WORKER_MIN_WINDOWS,
      maxQueue: config.CLASSIFIER_WORKER_MAX_QUEUE,
      inlineSlice: config.CLASSIFIER_INLINE_SLICE,
      idleMs: config.CLASSIFIER_WORKER_IDLE_MS > 0 ? config.CLASSIFIER_WORKER_IDLE_MS : undefined,
      nice: config.CLASSIFIER_WORKER_NICE,
    });
    return pooled;
  };
  const built = buildClassifierBackends(parseClassifierBackendsConfig(config), { builtin });
  try {
    await built.ready();
  } catch (err) {
    await built.close();
    await pooled?.close();
    throw err;
  }
  const instances = [...new Set(built.byType.values())];
  const byType = Object.fromEntries([...built.byType].map(([type, backend]) => [type, backend.name]));
  configureClassifierRouter(new ClassifierRouter({ backends: instances, routing: { byType } }));
  return {
    poolStats: () => pooled?.stats(),
    async close() {
      configureClassifierRouter(undefined);
      await built.close();
      await pooled?.close();
    },
  };
}
