import { Writable } from 'node:stream';
import { generateApiKey } from '#src/shared/api-key';
import { loadConfig } from '#src/shared/config';
import { createLogger } from '#src/shared/logger';
import { ALL_SERVICES, startServices, type RunningServices } from '#src/services';
import { startFuzzUpstream, type FuzzUpstream } from './fuzz-upstream';
import type { FuzzContext } from './targets';

/**
 * The services under fuzz: detection, gateway and sensor in this process on port 0 (detection over
 * real gRPC), an in-memory PGlite (or DATABASE_URL), the fuzz upstream for both APIs. The default
 * policy scans input and output (block on e-mail input, log elsewhere) so both directions are exercised;
 * a scratch policy and project are what management fuzzing may change.
 */
export interface FuzzStack {
  gatewayPort: number;
  sensorPort: number;
  ctx: FuzzContext;
  upstream: FuzzUpstream;
  /** Error-level log lines the services wrote (a 500 is logged at error). */
  errorLines: string[];
  health(): Promise<{ gateway: number; sensor: number }>;
  close(): Promise<void>;
}

class ErrorLines extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line.includes('"level":"error"') || line.includes('"level":"fatal"')) this.lines.push(line.slice(0, 2000));
    cb();
  }
}

const portOf = (url: string | undefined) => Number(new URL(url ?? 'http://x:0').port);

export async function startFuzzStack(options: { databaseUrl?: string; detectionThread?: boolean; env?: Record<string, string> } = {}): Promise<FuzzStack> {
  const upstream = await startFuzzUpstream();
  const apiKey = generateApiKey();
  const config = loadConfig({
    PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0',
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : { DATA_DIR: 'memory://fuzz' }),
    BOOTSTRAP_API_KEY: apiKey,
    OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-fuzz-upstream', ANTHROPIC_BASE_URL: upstream.url,
    UPSTREAM_TIMEOUT_MS: '2000', SHUTDOWN_TIMEOUT_MS: '5000', LOG_LEVEL: 'warn',
    PLATFORM_TRAFFIC_RPM: '10000000', PLATFORM_MANAGEMENT_RPM: '10000000', AUTH_FAILURES_PER_MINUTE: '1000000',
    ...options.env,
  });
  const sink = new ErrorLines();
  let running: RunningServices;
  try {
    running = await startServices({ config, services: ALL_SERVICES, logger: createLogger({ level: 'warn', destination: sink }), detectionThread: options.detectionThread });
  } catch (err) {
    await upstream.close();
    throw err;
  }
  const gateway = running.gatewayUrl ?? '';
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gateway}${path}`, {
      method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`fuzz setup: ${method} ${path} → ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, any>;
  };
  const defaultPolicy = (await call('GET', '/v1/policies/?is_default=true')).results[0].id as string;
  await call('PATCH', `/v1/policies/${defaultPolicy}/`, {
    policy_mode: 'IO',
    input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }, { detector_type: 'prompt_attack', threshold: 'L2', action: 'log' }, { detector_type: 'secrets/credential', threshold: 'L2', action: 'log' }],
    output_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }, { detector_type: 'pii/credit_card', threshold: 'L2', action: 'log' }],
    deny_list: { entries: ['project aurora'], match_type: 'contains' },
  });
  const scratchPolicy = (await call('POST', '/v1/policies/', { name: 'fuzz scratch' })).id as string;
  const scratchProject = (await call('POST', '/v1/projects/', { name: 'fuzz scratch', policy_id: scratchPolicy })).id as string;
  return {
    gatewayPort: portOf(running.gatewayUrl),
    sensorPort: portOf(running.sensorUrl),
    ctx: { apiKey, scratchPolicyIds: [scratchPolicy], scratchProjectIds: [scratchProject] },
    upstream,
    errorLines: sink.lines,
    async health() {
      const [g, s] = await Promise.all([fetch(`${gateway}/health`), fetch(`${running.sensorUrl}/health`)]);
      return { gateway: g.status, sensor: s.status };
    },
    async close() {
      await running.close();
      await upstream.close();
    },
  };
}
