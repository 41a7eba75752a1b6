import { CLASSIFIER_TYPES, type ClassifierBackend, type ClassifierScores } from '../backend';
import { BuiltinModel } from './builtin-model';
import type { BuiltinArtefact } from './model-format';

/**
 * The default backend: the in-process builtin model (no network, no GPU, no native runtime). It scores
 * all 15 classifier types. The committed artefact (model/model.json, produced by `npm run train`) is
 * loaded once per process, on first use.
 */

/**
 * The type query puts model.json into the compilation, so tsc copies it to dist/ next to this file; the
 * require() reads it lazily, when the backend is first built (the registry module is imported by every
 * process, including ones that never use a classifier).
 */
type CommittedArtefact = typeof import('./model/model.json');

let defaultModel: BuiltinModel | undefined;

export function loadBuiltinModel(): BuiltinModel {
  if (!defaultModel) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const artefact = require('./model/model.json') as CommittedArtefact;
    defaultModel = new BuiltinModel(artefact as unknown as BuiltinArtefact);
  }
  return defaultModel;
}

export interface BuiltinBackendOptions {
  /** A specific model (tests); default: the committed artefact. */
  model?: BuiltinModel;
}

export function createBuiltinBackend(options: BuiltinBackendOptions = {}): ClassifierBackend {
  const model = options.model ?? loadBuiltinModel();
  return {
    name: 'builtin',
    types: CLASSIFIER_TYPES,
    local: true,
    classify(text: string, signal: AbortSignal): Promise<ClassifierScores> {
      try {
        signal.throwIfAborted();
        return Promise.resolve(model.scoreWindow(text));
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
    classifyNow: (texts) => texts.map((text) => model.scoreWindow(text)),
  };
}
