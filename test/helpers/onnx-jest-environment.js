/**
 * Jest's node environment runs each test file in its own VM context, with its own typed-array
 * constructors; onnxruntime-node creates output tensors from the outer realm's Float32Array, so
 * onnxruntime-common's `instanceof` checks fail inside a test ("A float32 tensor's data must be type of
 * Float32Array"). Test files that run ONNX models use this environment (docblock
 * `@jest-environment ./test/helpers/onnx-jest-environment.js`), which shares the outer realm's typed arrays.
 * A deployed process has one realm: this is a test-harness concern only.
 */
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
  'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
];

class OnnxEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}

module.exports = OnnxEnvironment;
