import {
  detectionPackageDefinition,
  type ProtoDetectStreamRequest,
  type ProtoDetectStreamResponse,
  type ProtoDetectStreamStart,
} from '../../../src/shared/proto';

interface Named {
  name: string;
  id?: number;
}
const fields = (name: string) =>
  ((detectionPackageDefinition[`detection.v1.${name}`] as unknown as { type: { field?: Named[] } }).type.field ?? []).map((f) => f.name);

describe('shared/proto: streaming messages', () => {
  it('hand-written stream interfaces have exactly the proto fields', () => {
    const start: ProtoDetectStreamStart = {
      direction: 'DIRECTION_INPUT',
      config: null,
      fail_mode: 'FAIL_MODE_OPEN',
      detector_timeout_ms: 0,
      window_chars: 0,
      hold_back_chars: 0,
      release: 'STREAM_RELEASE_ADAPTIVE',
    };
    const request: ProtoDetectStreamRequest = { start: null, text: '', final: false, ack: false };
    const response: ProtoDetectStreamResponse = {
      findings: [],
      new_categories: [],
      released_up_to: 0,
      received: 0,
      blocked: false,
      categories: [],
      block_reason: '',
      outcomes: [],
      scanned: false,
      allow_listed: false,
      done: false,
      elapsed_ms: 0,
    };
    const pairs: Array<[string, object]> = [
      ['DetectStreamStart', start],
      ['DetectStreamRequest', request],
      ['DetectStreamResponse', response],
    ];
    for (const [name, sample] of pairs) expect([name, fields(name).sort()]).toEqual([name, Object.keys(sample).sort()]);
  });
});
