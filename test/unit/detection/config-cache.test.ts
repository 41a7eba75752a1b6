import { ConfigCache, findField, lengthDelimited, withoutRange } from '../../../src/detection/config-cache';
import type { CompiledConfig } from '../../../src/detection/engine';
import { compileRules } from '../../../src/detection/match-rules';
import { serializeDetectRequest } from '../../../src/shared/detection-client';
import { AppError, invalidRequest } from '../../../src/shared/errors';
import type { DetectionPolicy } from '../../../src/shared/policy';
import { detectionMethod, detectionStreamMethod, type ProtoDetectRequest, type ProtoDetectStreamRequest } from '../../../src/shared/proto';

const detect = detectionMethod<ProtoDetectRequest, unknown>('Detect');
const stream = detectionStreamMethod<ProtoDetectStreamRequest, unknown>('DetectStream');

const policy = (cacheKey: string): DetectionPolicy => ({
  cacheKey,
  policyMode: 'IO',
  inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
  outputDetectors: [],
  allowList: { entries: ['ok.example'], match_type: 'contains' },
  denyList: { entries: ['forbidden'], match_type: 'contains' },
  customDetectors: [],
});

const compiled = (p: DetectionPolicy): CompiledConfig => ({ config: p, rules: compileRules(p) });

describe('findField (protobuf wire format)', () => {
  const request = serializeDetectRequest({ text: 'some text to scan', direction: 'input', policy: policy('k1') });

  it('finds the config field of a DetectRequest: its value decodes to the config', () => {
    const range = findField(request, 3);
    expect(range).toEqual({ start: expect.any(Number), valueStart: expect.any(Number), end: request.length });
    // The message without the field decodes to everything else, config absent.
    const rest = detect.requestDeserialize(withoutRange(request, range!));
    expect(rest.config).toBeNull();
    expect(rest.text).toBe('some text to scan');
    // Re-framed on its own, the value is the same config as in the whole message.
    const alone = detect.requestDeserialize(lengthDelimited(3, request.subarray(range!.valueStart, range!.end)));
    expect(alone.config).toEqual(detect.requestDeserialize(request).config);
  });

  it('null when the field is absent; undefined when it occurs twice (protobuf would merge) or the bytes are malformed', () => {
    const noConfig = detect.requestSerialize({ text: 'x', direction: 'DIRECTION_INPUT', config: null, fail_mode: 'FAIL_MODE_CLOSED', detector_timeout_ms: 0 });
    expect(findField(noConfig, 3)).toBeNull();
    const range = findField(request, 3)!;
    const twice = Buffer.concat([request, request.subarray(range.start, range.end)]);
    expect(findField(twice, 3)).toBeUndefined();
    expect(findField(request.subarray(0, request.length - 1), 3)).toBeUndefined(); // truncated
    expect(findField(Buffer.from([0x1b]), 3)).toBeUndefined(); // field 3 as a group
    expect(findField(Buffer.from([0x18, 0x01]), 3)).toBeUndefined(); // field 3 as a varint
  });

  it('finds the config inside the start of a DetectStreamRequest', () => {
    const msg = stream.requestSerialize({
      start: { direction: 'DIRECTION_OUTPUT', config: { cache_key: 'k', policy_mode: 'POLICY_MODE_IO', input_detectors: [], output_detectors: [], allow_list: null, deny_list: null, custom_detectors: [], pii_regions: [] }, fail_mode: 'FAIL_MODE_OPEN', detector_timeout_ms: 0, window_chars: 0, hold_back_chars: 0 },
      text: 'chunk',
      final: false,
      ack: true,
    });
    const start = findField(msg, 1)!;
    const config = findField(msg, 2, start.valueStart, start.end);
    expect(config).toEqual({ start: expect.any(Number), valueStart: expect.any(Number), end: expect.any(Number) });
    expect(config!.end).toBeLessThanOrEqual(start.end);
  });
});

describe('ConfigCache', () => {
  const key = (s: string) => Buffer.from(s);

  it('compiles a configuration once: the second lookup of the same bytes is a hit', () => {
    const cache = new ConfigCache({ maxEntries: 4, maxBytes: 1 << 20 });
    let compiles = 0;
    const compile = () => {
      compiles++;
      return compiled(policy('a'));
    };
    const first = cache.resolve(cache.lookup(key('config-a'), 0, 8), compile);
    const again = cache.lookup(key('config-a'), 0, 8);
    expect(again.kind).toBe('hit');
    expect(cache.resolve(again, compile)).toBe(first);
    expect(compiles).toBe(1);
    expect(cache.stats()).toEqual({ entries: 1, bytes: 8, hits: 1, misses: 1, compiles: 1 });
    expect(cache.lookup(key('config-b'), 0, 8).kind).toBe('miss'); // other bytes, other entry
  });

  it('never caches a configuration that failed to compile: it fails again on the next call', () => {
    const cache = new ConfigCache({ maxEntries: 4, maxBytes: 1 << 20 });
    const bad = () => {
      throw invalidRequest('bad pattern', 'invalid_pattern');
    };
    for (let i = 0; i < 2; i++) {
      const lookup = cache.lookup(key('bad'), 0, 3);
      expect(lookup.kind).toBe('miss');
      expect(() => cache.resolve(lookup, bad)).toThrow(AppError);
    }
    expect(cache.stats()).toMatchObject({ entries: 0, compiles: 2 });
  });

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new ConfigCache({ maxEntries: 2, maxBytes: 1 << 20 });
    const add = (s: string) => cache.resolve(cache.lookup(key(s), 0, s.length), () => compiled(policy(s)));
    add('one');
    add('two');
    expect(cache.lookup(key('one'), 0, 3).kind).toBe('hit'); // `one` is now the most recent
    add('three');
    expect(cache.stats().entries).toBe(2);
    expect(cache.lookup(key('two'), 0, 3).kind).toBe('miss');
    expect(cache.lookup(key('one'), 0, 3).kind).toBe('hit');
    expect(cache.lookup(key('three'), 0, 5).kind).toBe('hit');
  });

  it('keeps the cached bytes within maxBytes, and does not cache a configuration larger than that', () => {
    const cache = new ConfigCache({ maxEntries: 100, maxBytes: 10 });
    const add = (s: string) => cache.resolve(cache.lookup(key(s), 0, s.length), () => compiled(policy(s)));
    add('aaaa');
    add('bbbb');
    add('cccc'); // 12 bytes > 10: `aaaa` goes
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 8 });
    expect(cache.lookup(key('aaaa'), 0, 4).kind).toBe('miss');
    add('x'.repeat(11));
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 8 });
  });

  it('is off with maxEntries 0: nothing is looked up', () => {
    const cache = new ConfigCache({ maxEntries: 0, maxBytes: 1 << 20 });
    expect(cache.enabled).toBe(false);
    expect(cache.lookup(key('a'), 0, 1)).toEqual({ kind: 'none' });
  });
});
