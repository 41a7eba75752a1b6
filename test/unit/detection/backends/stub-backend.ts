import type { ClassifierBackend, ClassifierScores, ClassifierType } from '../../../../src/detection/classifiers/backend';

/** An in-process backend with scripted answers (stands in for builtin in unit tests). */
export function stubBackend(name: string, types: readonly ClassifierType[], answer: (text: string) => ClassifierScores | Error) {
  const calls: string[] = [];
  const backend: ClassifierBackend = {
    name,
    types,
    classify: async (text) => {
      calls.push(text);
      const a = answer(text);
      if (a instanceof Error) throw a;
      return a;
    },
  };
  return { backend, calls };
}
