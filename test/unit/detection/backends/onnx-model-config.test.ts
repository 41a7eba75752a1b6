import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseClassifierBackendsConfig } from '../../../../src/detection/classifiers/backends/classifier-config';
import { calibrateProbability, readOnnxModelDir } from '../../../../src/detection/classifiers/backends/onnx-model-config';
import { ConfigError, loadConfig } from '../../../../src/shared/config';
import { TEST_CALIBRATION, testModelConfig, writeTestModelDir } from '../../../helpers/onnx-test-model';

const parse = (env: Record<string, string>) => parseClassifierBackendsConfig(loadConfig(env));

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('onnx model directory (config.json, files, label mapping)', () => {
  const dirs: string[] = [];
  const dir = (options: Parameters<typeof writeTestModelDir>[0] = {}) => {
    const d = writeTestModelDir(options);
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('reads a valid directory: labels in logit order, a null type for BENIGN, defaults for stride', () => {
    const config = testModelConfig();
    delete config.stride;
    const spec = readOnnxModelDir(dir({ config }), ['prompt_attack']);
    expect(spec.labels.map((l) => [l.name, l.type])).toEqual([
      ['BENIGN', null],
      ['INJECTION', 'prompt_attack'],
      ['JAILBREAK', 'jailbreak'],
    ]);
    expect(spec.labels[1]?.calibration).toEqual(TEST_CALIBRATION);
    expect(spec.maxLength).toBe(64);
    expect(spec.stride).toBe(8); // an eighth of max_length 64
    expect(spec.activation).toBe('softmax');
  });

  it('is selected by CLASSIFIER_BACKENDS=…=onnx with ONNX_MODEL_DIR and its runtime settings', () => {
    const config = parse({ CLASSIFIER_BACKENDS: 'prompt_attack,jailbreak=onnx', ONNX_MODEL_DIR: dir(), ONNX_THREADS: '2' });
    expect(config.assignments.get('prompt_attack')).toEqual(['onnx']);
    expect(config.assignments.get('moderated_content/hate')).toEqual(['builtin']);
    expect(config.onnx).toMatchObject({ threads: 2, maxConcurrency: 2, timeoutMs: 1000 });
    expect(config.onnx?.spec.labels).toHaveLength(3);
  });

  it('names a missing ONNX_MODEL_DIR, a directory that does not exist, and missing files', () => {
    expect(problemsOf(() => parse({ CLASSIFIER_BACKENDS: 'jailbreak=onnx' }))).toEqual([
      expect.stringMatching(/^ONNX_MODEL_DIR: required when onnx is used/),
    ]);
    expect(problemsOf(() => parse({ CLASSIFIER_BACKENDS: 'jailbreak=onnx', ONNX_MODEL_DIR: '/nonexistent/model' }))).toEqual([
      'ONNX_MODEL_DIR: "/nonexistent/model" is not a directory',
    ]);
    const d = dir();
    rmSync(join(d, 'model.onnx'));
    rmSync(join(d, 'tokenizer.json'));
    expect(problemsOf(() => readOnnxModelDir(d, ['jailbreak']))).toEqual([`ONNX_MODEL_DIR: model.onnx, tokenizer.json missing in "${d}"`]);
  });

  it('rejects a label mapped to an unknown type, naming the label', () => {
    const config = testModelConfig({ labels: [{ name: 'SAFE', type: null }, { name: 'INJECTION', type: 'prompt_injection' }] });
    const problems = problemsOf(() => readOnnxModelDir(dir({ config }), ['prompt_attack']));
    expect(problems[0]).toMatch(/^ONNX_MODEL_DIR: config\.json labels\.1: "prompt_injection" \(label "INJECTION"\) is not a classifier type/);
  });

  it('rejects a type assigned to onnx that no label scores', () => {
    const problems = problemsOf(() => parse({ CLASSIFIER_BACKENDS: 'prompt_attack,moderated_content/hate=onnx', ONNX_MODEL_DIR: dir() }));
    expect(problems).toEqual(['ONNX_MODEL_DIR: config.json has no label for moderated_content/hate (assigned to onnx by CLASSIFIER_BACKENDS)']);
  });

  it.each([
    [{ activation: 'relu' }, /config\.json activation: /],
    [{ calibration: { L1: 0.5, L2: 0.75, L3: 0.8, L4: 0.9 } }, /config\.json calibration: calibration must satisfy L1 > L2 > L3 > L4/],
    [{ calibration: { L1: 1.2, L2: 0.75, L3: 0.5, L4: 0.3 } }, /config\.json calibration\.L1: /],
    [{ stride: 40 }, /config\.json stride: stride must be less than half of max_length/],
    [{ max_length: 'long' }, /config\.json max_length: /],
    [{ labels: [] }, /config\.json labels: /],
    [{ labels: [{ name: 'INJECTION', type: 'prompt_attack' }] }, /config\.json activation: softmax needs at least two labels/],
    [{ labels: [{ name: 'A', type: null }, { name: 'B', type: null }] }, /config\.json labels: no label maps to a detector type/],
    [{ labels: [{ name: 'A', type: 'jailbreak' }, { name: 'A', type: null }] }, /labels\.1: label "A" is listed twice/],
    [{ threshold: 0.5 }, /config\.json: Unrecognized key/],
  ])('rejects config.json %j', (overrides, message) => {
    const problems = problemsOf(() => readOnnxModelDir(dir({ config: testModelConfig(overrides) }), ['jailbreak']));
    expect(problems.some((p) => p.startsWith('ONNX_MODEL_DIR: ') && message.test(p))).toBe(true);
  });

  it('rejects files that are not JSON and a tokenizer.json that is not a tokenizers file', () => {
    const d = dir();
    writeFileSync(join(d, 'config.json'), '{ labels: ');
    writeFileSync(join(d, 'tokenizer.json'), '{"vocab": {}}');
    const problems = problemsOf(() => readOnnxModelDir(d, ['jailbreak']));
    expect(problems).toEqual([
      expect.stringMatching(/^ONNX_MODEL_DIR: config\.json is not valid JSON/),
      'ONNX_MODEL_DIR: tokenizer.json is not a Hugging Face tokenizers file (no "model" object)',
    ]);
  });
});

describe('calibrateProbability (raw probability → the shared L1–L4 scale)', () => {
  it('maps each configured level start onto its cut-off, linearly in between', () => {
    expect(calibrateProbability(TEST_CALIBRATION.L1, TEST_CALIBRATION)).toBeCloseTo(0.9, 12);
    expect(calibrateProbability(TEST_CALIBRATION.L2, TEST_CALIBRATION)).toBeCloseTo(0.75, 12);
    expect(calibrateProbability(TEST_CALIBRATION.L3, TEST_CALIBRATION)).toBeCloseTo(0.5, 12);
    expect(calibrateProbability(TEST_CALIBRATION.L4, TEST_CALIBRATION)).toBeCloseTo(0.3, 12);
    expect(calibrateProbability(0.875, TEST_CALIBRATION)).toBeCloseTo(0.625, 12); // halfway between L3 and L2
    expect(calibrateProbability(0.995, TEST_CALIBRATION)).toBeCloseTo(0.95, 12);
    expect(calibrateProbability(0.25, TEST_CALIBRATION)).toBeCloseTo(0.15, 12);
    expect(calibrateProbability(0, TEST_CALIBRATION)).toBe(0);
    expect(calibrateProbability(1, TEST_CALIBRATION)).toBe(1);
  });

  it('is monotone, the identity without calibration, and 0 for NaN', () => {
    let previous = -1;
    for (let p = 0; p <= 1; p += 0.001) {
      const c = calibrateProbability(p, TEST_CALIBRATION);
      expect(c).toBeGreaterThanOrEqual(previous);
      previous = c;
    }
    expect(calibrateProbability(0.42, undefined)).toBe(0.42);
    expect(calibrateProbability(Number.NaN, TEST_CALIBRATION)).toBe(0);
  });
});
