import * as protobuf from 'protobufjs';

/**
 * Writes ONNX model files without Python: a minimal subset of onnx.proto (the messages and fields a
 * plain inference graph needs, with the field numbers of the official schema) encoded with protobufjs.
 * Used by the tests and bench:onnx to build synthetic sequence classifiers; nothing in the product
 * loads it.
 */

const ONNX_SUBSET = {
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            ir_version: { type: 'int64', id: 1 },
            producer_name: { type: 'string', id: 2 },
            graph: { type: 'GraphProto', id: 7 },
            opset_import: { rule: 'repeated', type: 'OperatorSetIdProto', id: 8 },
          },
        },
        OperatorSetIdProto: { fields: { domain: { type: 'string', id: 1 }, version: { type: 'int64', id: 2 } } },
        GraphProto: {
          fields: {
            node: { rule: 'repeated', type: 'NodeProto', id: 1 },
            name: { type: 'string', id: 2 },
            initializer: { rule: 'repeated', type: 'TensorProto', id: 5 },
            input: { rule: 'repeated', type: 'ValueInfoProto', id: 11 },
            output: { rule: 'repeated', type: 'ValueInfoProto', id: 12 },
          },
        },
        NodeProto: {
          fields: {
            input: { rule: 'repeated', type: 'string', id: 1 },
            output: { rule: 'repeated', type: 'string', id: 2 },
            name: { type: 'string', id: 3 },
            op_type: { type: 'string', id: 4 },
            attribute: { rule: 'repeated', type: 'AttributeProto', id: 5 },
          },
        },
        AttributeProto: {
          fields: {
            name: { type: 'string', id: 1 },
            f: { type: 'float', id: 2 },
            i: { type: 'int64', id: 3 },
            ints: { rule: 'repeated', type: 'int64', id: 8 },
            type: { type: 'int32', id: 20 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: 'repeated', type: 'int64', id: 1 },
            data_type: { type: 'int32', id: 2 },
            name: { type: 'string', id: 8 },
            raw_data: { type: 'bytes', id: 9 },
          },
        },
        ValueInfoProto: { fields: { name: { type: 'string', id: 1 }, type: { type: 'TypeProto', id: 2 } } },
        TypeProto: { fields: { tensor_type: { type: 'TensorTypeProto', id: 1 } } },
        TensorTypeProto: { fields: { elem_type: { type: 'int32', id: 1 }, shape: { type: 'TensorShapeProto', id: 2 } } },
        TensorShapeProto: { fields: { dim: { rule: 'repeated', type: 'Dimension', id: 1 } } },
        Dimension: {
          oneofs: { value: { oneof: ['dim_value', 'dim_param'] } },
          fields: { dim_value: { type: 'int64', id: 1 }, dim_param: { type: 'string', id: 2 } },
        },
      },
    },
  },
};

/** onnx.TensorProto.DataType values used here. */
export const DTYPE = { float: 1, int32: 6, int64: 7 } as const;
const ATTR = { float: 1, int: 2, ints: 7 } as const;

export type AttrValue = { float: number } | { int: number } | { ints: number[] };
type Dim = number | string;

let modelType: protobuf.Type | undefined;

export class OnnxGraphBuilder {
  private readonly nodes: object[] = [];
  private readonly initializers: object[] = [];
  private readonly inputs: object[] = [];
  private readonly outputs: object[] = [];
  private counter = 0;
  /** Parameters held by initializers (for reports). */
  params = 0;

  input(name: string, dtype: keyof typeof DTYPE, dims: Dim[]): string {
    this.inputs.push(valueInfo(name, dtype, dims));
    return name;
  }

  output(name: string, dtype: keyof typeof DTYPE, dims: Dim[]): void {
    this.outputs.push(valueInfo(name, dtype, dims));
  }

  /** A constant tensor; float data counts towards `params`. */
  init(prefix: string, dims: number[], data: Float32Array | BigInt64Array): string {
    const name = this.fresh(prefix);
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (data instanceof Float32Array) this.params += data.length;
    this.initializers.push({ name, dims, data_type: data instanceof Float32Array ? DTYPE.float : DTYPE.int64, raw_data: bytes });
    return name;
  }

  ints(prefix: string, values: number[]): string {
    return this.init(prefix, [values.length], BigInt64Array.from(values.map(BigInt)));
  }

  scalar(prefix: string, value: number): string {
    return this.init(prefix, [], Float32Array.of(value));
  }

  /** Adds a node; returns its (first) output name. */
  op(opType: string, inputs: string[], attrs: Record<string, AttrValue> = {}, outputs = 1): string {
    const names = Array.from({ length: outputs }, () => this.fresh(opType.toLowerCase()));
    const attribute = Object.entries(attrs).map(([name, v]) => {
      if ('float' in v) return { name, type: ATTR.float, f: v.float };
      if ('int' in v) return { name, type: ATTR.int, i: v.int };
      return { name, type: ATTR.ints, ints: v.ints };
    });
    this.nodes.push({ op_type: opType, name: this.fresh(`n_${opType}`), input: inputs, output: names, attribute });
    return names[0] as string;
  }

  /** Renames the last node's output (graph outputs need fixed names). */
  nameLast(name: string): string {
    const last = this.nodes[this.nodes.length - 1] as { output: string[] };
    last.output[0] = name;
    return name;
  }

  encode(opset = 17): Uint8Array {
    modelType ??= protobuf.Root.fromJSON(ONNX_SUBSET).lookupType('onnx.ModelProto');
    const message = modelType.fromObject({
      ir_version: 8,
      producer_name: 'llm-content-security-gateway synthetic',
      opset_import: [{ domain: '', version: opset }],
      graph: { name: 'synthetic', node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
    });
    return modelType.encode(message).finish();
  }

  private fresh(prefix: string): string {
    return `${prefix}_${this.counter++}`;
  }
}

function valueInfo(name: string, dtype: keyof typeof DTYPE, dims: Dim[]): object {
  const dim = dims.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d }));
  return { name, type: { tensor_type: { elem_type: DTYPE[dtype], shape: { dim } } } };
}

/** Deterministic pseudo-random weights (mulberry32), uniform in [-scale, scale]. */
export function randomWeights(length: number, scale: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  let a = seed >>> 0;
  for (let i = 0; i < length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1) * scale;
  }
  return out;
}
