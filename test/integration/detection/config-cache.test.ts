import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ConfigCache } from '../../../src/detection/config-cache';
import { startDetectionServer, type StartedDetectionServer } from '../../../src/detection/server';
import { createDetectionClient, type DetectionClient, type DetectResult } from '../../../src/shared/detection-client';
import type { DetectionPolicy } from '../../../src/shared/policy';
import { rejectionOf } from '../../helpers/rejection';

/**
 * The detection server's compiled-configuration cache over the real gRPC hop: a repeated configuration
 * is compiled once (counted by the cache, not timed), results equal those of a server without the
 * cache, invalid configurations are rejected every time; and the Unix domain socket listener.
 */

const policy = (overrides: Partial<DetectionPolicy> = {}): DetectionPolicy => ({
  cacheKey: 'cache-policy:v1',
  policyMode: 'IO',
  inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
  outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
  allowList: { entries: ['ok.example'], match_type: 'contains' },
  denyList: { entries: ['project nightjar'], match_type: 'contains' },
  customDetectors: [{ name: 'ticket', pattern: 'TCK-[0-9]+', action: 'alert' }],
  ...overrides,
});

const TEXTS = [
  'write to jane.doe@corp.io about TCK-1234',
  'the project nightjar launch is on Monday',
  'see ok.example and nothing else',
  'a harmless sentence',
];

const withoutTimes = (r: DetectResult) => ({ ...r, elapsedMs: 0, outcomes: r.outcomes.map((o) => ({ ...o, elapsedMs: 0 })) });

async function streamed(client: DetectionClient, p: DetectionPolicy, text: string) {
  const stream = client.detectStream({ direction: 'input', policy: p });
  await stream.write(text);
  return stream.end();
}

describe('compiled-configuration cache (Detect and DetectStream over gRPC)', () => {
  let cache: ConfigCache;
  let cached: StartedDetectionServer;
  let uncached: StartedDetectionServer;
  let client: DetectionClient;
  let plain: DetectionClient;

  beforeAll(async () => {
    cache = new ConfigCache({ maxEntries: 3, maxBytes: 1 << 20 });
    cached = await startDetectionServer({ address: '127.0.0.1:0', configCache: cache });
    uncached = await startDetectionServer({ address: '127.0.0.1:0', configCache: new ConfigCache({ maxEntries: 0, maxBytes: 0 }) });
    client = createDetectionClient({ address: `127.0.0.1:${cached.port}`, timeoutMs: 5000 });
    plain = createDetectionClient({ address: `127.0.0.1:${uncached.port}`, timeoutMs: 5000 });
  });

  afterAll(async () => {
    client.close();
    plain.close();
    await Promise.all([cached.close(1000), uncached.close(1000)]);
  });

  it('compiles a configuration sent on many calls once, with the same results as without the cache', async () => {
    const p = policy({ cacheKey: 'repeat:v1' });
    const before = cache.stats();
    for (const direction of ['input', 'output'] as const) {
      for (const text of TEXTS) {
        const [a, b] = await Promise.all([client.detect({ text, direction, policy: p }), plain.detect({ text, direction, policy: p })]);
        expect(withoutTimes(a)).toEqual(withoutTimes(b));
      }
    }
    const after = cache.stats();
    expect(after.compiles - before.compiles).toBe(1);
    expect(after.hits - before.hits).toBe(2 * TEXTS.length - 1);
    // The results really depend on the configuration (not a degenerate pass).
    const blocked = await client.detect({ text: TEXTS[0]!, direction: 'input', policy: p });
    expect(blocked.blocked).toBe(true);
    expect(blocked.categories.map((c) => c.type).sort()).toEqual(['custom/ticket', 'pii/email']);
  });

  it('different configuration bytes are different entries', async () => {
    const before = cache.stats().compiles;
    await client.detect({ text: 'x', direction: 'input', policy: policy({ cacheKey: 'other:v1' }) });
    await client.detect({ text: 'x', direction: 'input', policy: policy({ cacheKey: 'other:v2' }) });
    await client.detect({ text: 'x', direction: 'input', policy: policy({ cacheKey: 'other:v2', denyList: { entries: ['x'], match_type: 'exact' } }) });
    expect(cache.stats().compiles - before).toBe(3);
    const denied = await client.detect({ text: 'x', direction: 'input', policy: policy({ cacheKey: 'other:v2', denyList: { entries: ['x'], match_type: 'exact' } }) });
    expect(denied.blocked).toBe(true);
    expect(cache.stats().compiles - before).toBe(3);
  });

  it('keeps at most its bound of entries (least recently used first)', async () => {
    for (let i = 0; i < 5; i++) await client.detect({ text: 'x', direction: 'input', policy: policy({ cacheKey: `lru:${i}` }) });
    expect(cache.stats().entries).toBe(3);
    const before = cache.stats().compiles;
    await client.detect({ text: 'x', direction: 'input', policy: policy({ cacheKey: 'lru:4' }) }); // kept
    await client.detect({ text: 'x', direction: 'input', policy: policy({ cacheKey: 'lru:0' }) }); // evicted: compiled again
    expect(cache.stats().compiles - before).toBe(1);
  });

  it('rejects an invalid configuration with INVALID_ARGUMENT on every call, never caching it', async () => {
    const bad = policy({ cacheKey: 'bad:v1', customDetectors: [{ name: 'broken', pattern: '(unclosed', action: 'block' }] });
    const before = cache.stats();
    for (let i = 0; i < 3; i++) {
      const err = await rejectionOf(client.detect({ text: 'x', direction: 'input', policy: bad }));
      expect(err.type).toBe('invalid_request');
      expect(err.code).toBe('invalid_pattern');
      const streamErr = await rejectionOf(streamed(client, bad, 'x'));
      expect(streamErr.code).toBe('invalid_pattern');
    }
    expect(cache.stats().compiles - before.compiles).toBe(6);
    expect(cache.stats().hits - before.hits).toBe(0);
  });

  it('a stream start uses the same cache: one compile for Detect and DetectStream of one configuration', async () => {
    const p = policy({ cacheKey: 'stream:v1' });
    const before = cache.stats().compiles;
    await client.detect({ text: 'x', direction: 'input', policy: p });
    const first = await streamed(client, p, TEXTS[0]!);
    const second = await streamed(client, p, TEXTS[1]!);
    expect(cache.stats().compiles - before).toBe(1);
    expect(first.blocked).toBe(true);
    expect(first.categories.map((c) => c.type)).toContain('pii/email');
    expect(second.categories.map((c) => c.type)).toEqual(['deny_list']);
    const reference = await streamed(plain, p, TEXTS[1]!);
    expect(second.categories).toEqual(reference.categories);
  });
});

describe('detection over a Unix domain socket', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csg-uds-'));
  const socketPath = path.join(dir, 'detection.sock');
  let server: StartedDetectionServer;

  beforeAll(async () => {
    // A stale socket file: the process that listened on it was killed.
    const script = `require('node:net').createServer().listen(${JSON.stringify(socketPath)}, () => process.kill(process.pid, 'SIGKILL'))`;
    spawnSync(process.execPath, ['-e', script]);
    expect(fs.lstatSync(socketPath).isSocket()).toBe(true);
    server = await startDetectionServer({ address: '127.0.0.1:0', socketPath });
  });

  afterAll(async () => {
    await server.close(1000);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves Detect, DetectStream and health on the socket and on TCP alike', async () => {
    expect(server.socketPath).toBe(socketPath);
    for (const address of [`unix:${socketPath}`, `127.0.0.1:${server.port}`]) {
      const client = createDetectionClient({ address, timeoutMs: 5000 });
      try {
        const result = await client.detect({ text: TEXTS[0]!, direction: 'input', policy: policy() });
        expect(result.blocked).toBe(true);
        expect((await streamed(client, policy(), TEXTS[1]!)).categories.map((c) => c.type)).toEqual(['deny_list']);
        expect(await client.checkHealth()).toBe(true);
      } finally {
        client.close();
      }
    }
  });

  it('refuses a socket path a running server listens on, and removes its socket when closed', async () => {
    await expect(startDetectionServer({ address: '127.0.0.1:0', socketPath })).rejects.toThrow(/in use/);
    const other = path.join(dir, 'other.sock');
    const second = await startDetectionServer({ address: '127.0.0.1:0', socketPath: other });
    expect(fs.existsSync(other)).toBe(true);
    await second.close(1000);
    expect(fs.existsSync(other)).toBe(false);
  });
});
