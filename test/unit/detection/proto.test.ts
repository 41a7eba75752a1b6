import fs from 'node:fs';
import path from 'node:path';
import {
  ACTION_TO_PROTO,
  DETECTION_PROTO_PATH,
  detectionPackageDefinition,
  detectionMethod,
  DIRECTION_TO_PROTO,
  FAIL_MODE_TO_PROTO,
  MATCH_TYPE_TO_PROTO,
  OUTCOME_STATUS_TO_PROTO,
  POLICY_MODE_TO_PROTO,
  THRESHOLD_TO_PROTO,
  type ProtoCategory,
  type ProtoCustomDetector,
  type ProtoDetectorConfig,
  type ProtoDetectorEntry,
  type ProtoDetectorOutcome,
  type ProtoDetectorTypeInfo,
  type ProtoDetectRequest,
  type ProtoDetectResponse,
  type ProtoFinding,
  type ProtoMatchList,
} from '../../../src/shared/proto';

/** The part of proto-loader's descriptor objects these tests read. */
interface Named {
  name: string;
}
const descriptor = (name: string) => detectionPackageDefinition[`detection.v1.${name}`] as unknown as { type: { value?: Named[]; field?: Named[] } };
const enumNames = (name: string) => (descriptor(name).type.value ?? []).map((v) => v.name);
const fieldNames = (name: string) => (descriptor(name).type.field ?? []).map((f) => f.name);

describe('shared/proto', () => {
  it('resolves the proto two levels above src/shared (and dist/shared): the package root', () => {
    const root = path.resolve(__dirname, '..', '..', '..');
    expect(DETECTION_PROTO_PATH).toBe(path.join(root, 'proto', 'detection', 'v1', 'detection.proto'));
    expect(fs.existsSync(DETECTION_PROTO_PATH)).toBe(true);
  });

  it('exposes both unary methods with their paths', () => {
    expect(detectionMethod('Detect').path).toBe('/detection.v1.DetectionService/Detect');
    expect(detectionMethod('ListDetectorTypes').path).toBe('/detection.v1.DetectionService/ListDetectorTypes');
  });

  it.each([
    ['Direction', 'DIRECTION_UNSPECIFIED', DIRECTION_TO_PROTO],
    ['PolicyMode', 'POLICY_MODE_UNSPECIFIED', POLICY_MODE_TO_PROTO],
    ['Threshold', 'THRESHOLD_UNSPECIFIED', THRESHOLD_TO_PROTO],
    ['Action', 'ACTION_UNSPECIFIED', ACTION_TO_PROTO],
    ['MatchType', 'MATCH_TYPE_UNSPECIFIED', MATCH_TYPE_TO_PROTO],
    ['FailMode', 'FAIL_MODE_UNSPECIFIED', FAIL_MODE_TO_PROTO],
    ['OutcomeStatus', 'OUTCOME_STATUS_UNSPECIFIED', OUTCOME_STATUS_TO_PROTO],
  ] as const)('enum %s matches the TypeScript table', (name, unspecified, table) => {
    expect(enumNames(name).sort()).toEqual([unspecified, ...Object.values(table)].sort());
  });

  it('hand-written message interfaces have exactly the proto fields', () => {
    const entry: ProtoDetectorEntry = { detector_type: '', threshold: 'THRESHOLD_L1', action: 'ACTION_LOG' };
    const list: ProtoMatchList = { entries: [], match_type: 'MATCH_TYPE_EXACT' };
    const custom: ProtoCustomDetector = { name: '', pattern: '', action: 'ACTION_LOG' };
    const config: ProtoDetectorConfig = {
      cache_key: '',
      policy_mode: 'POLICY_MODE_IO',
      input_detectors: [],
      output_detectors: [],
      allow_list: null,
      deny_list: null,
      custom_detectors: [],
    pii_regions: [],
    };
    const request: ProtoDetectRequest = { text: '', direction: 'DIRECTION_INPUT', config: null, fail_mode: 'FAIL_MODE_OPEN', detector_timeout_ms: 0 };
    const category: ProtoCategory = { type: '', confidence: 0, action: 'ACTION_LOG' };
    const finding: ProtoFinding = { type: '', confidence: 0, start: 0, end: 0, fired: false, signal: '' };
    const outcome: ProtoDetectorOutcome = { type: '', status: 'OUTCOME_STATUS_OK', message: '', elapsed_ms: 0, fail_mode: 'FAIL_MODE_OPEN' };
    const response: ProtoDetectResponse = {
      blocked: false,
      categories: [],
      findings: [],
      outcomes: [],
      scanned: false,
      allow_listed: false,
      elapsed_ms: 0,
      block_reason: '',
    };
    const info: ProtoDetectorTypeInfo = { value: '', label: '', category: '', implemented: false };
    const pairs: Array<[string, object]> = [
      ['DetectorEntry', entry],
      ['MatchList', list],
      ['CustomDetector', custom],
      ['DetectorConfig', config],
      ['DetectRequest', request],
      ['Category', category],
      ['Finding', finding],
      ['DetectorOutcome', outcome],
      ['DetectResponse', response],
      ['DetectorTypeInfo', info],
    ];
    for (const [name, sample] of pairs) expect([name, fieldNames(name).sort()]).toEqual([name, Object.keys(sample).sort()]);
  });
});
