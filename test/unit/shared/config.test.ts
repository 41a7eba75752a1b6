import { ConfigError, loadConfig } from '../../../src/shared/config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      HOST: '127.0.0.1',
      PORT: 8080,
      SENSOR_PORT: 8081,
      DETECTION_ADDRESS: '127.0.0.1:50051',
      DATA_DIR: './data',
      OPENAI_BASE_URL: 'https://api.openai.com/v1',
      ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
      LOG_LEVEL: 'info',
      JSON_MAX_DEPTH: 64,
    });
    expect(loadConfig({ JSON_MAX_DEPTH: '128' }).JSON_MAX_DEPTH).toBe(128);
    expect(c).toMatchObject({ DETECTION_SOCKET: '', DETECTION_CONFIG_CACHE_ENTRIES: 256 });
    expect(loadConfig({ DETECTION_ADDRESS: 'unix:/run/csg/detection.sock' }).DETECTION_ADDRESS).toBe('unix:/run/csg/detection.sock');
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.BOOTSTRAP_API_KEY).toBeUndefined();
    // Worker threads run below the serving threads' priority (Linux; worker-pool.ts).
    expect(c).toMatchObject({ CLASSIFIER_WORKER_NICE: 10, AUDIT_TOKEN_WORKER_NICE: 10 });
    expect(loadConfig({ CLASSIFIER_WORKER_NICE: '0', AUDIT_TOKEN_WORKER_NICE: '19' })).toMatchObject({ CLASSIFIER_WORKER_NICE: 0, AUDIT_TOKEN_WORKER_NICE: 19 });
    expect(() => loadConfig({ CLASSIFIER_WORKER_NICE: '20' })).toThrow('CLASSIFIER_WORKER_NICE must be between 0 and 19');
    expect(() => loadConfig({ AUDIT_TOKEN_WORKER_NICE: '-1' })).toThrow('AUDIT_TOKEN_WORKER_NICE must be between 0 and 19');
  });

  it('parses given values and treats empty strings as unset', () => {
    const c = loadConfig({
      PORT: '0',
      SENSOR_PORT: '9001',
      DATABASE_URL: 'postgres://u@db:5432/gw',
      REDIS_URL: '',
      OPENAI_BASE_URL: 'http://localhost:9999/v1/',
      BOOTSTRAP_API_KEY: 'svc_sk_' + 'x'.repeat(32),
    });
    expect(c.PORT).toBe(0);
    expect(c.SENSOR_PORT).toBe(9001);
    expect(c.DATABASE_URL).toBe('postgres://u@db:5432/gw');
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.OPENAI_BASE_URL).toBe('http://localhost:9999/v1');
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT: PORT must be a number/],
    [{ PORT: '70000' }, /PORT: PORT must be between 0 and 65535 \(got "70000"\)/],
    [{ PORT: '80.5' }, /PORT: PORT must be an integer/],
    [{ SENSOR_PORT: '-1' }, /SENSOR_PORT/],
    [{ BOOTSTRAP_API_KEY: 'sk_live_123' }, /BOOTSTRAP_API_KEY must start with svc_sk_/],
    [{ BOOTSTRAP_API_KEY: 'svc_sk_short' }, /BOOTSTRAP_API_KEY must start with svc_sk_ followed by 32/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL must be a redis/],
    [{ LOG_LEVEL: 'verbose' }, /LOG_LEVEL/],
    [{ DETECTION_ADDRESS: 'nope' }, /DETECTION_ADDRESS must be host:port/],
    [{ DETECTION_ADDRESS: `unix:/${'d'.repeat(107)}` }, /DETECTION_ADDRESS: a socket path is at most 107 bytes/],
    [{ DETECTION_SOCKET: 'relative.sock' }, /DETECTION_SOCKET must be an absolute path, off, or empty/],
    [{ DETECTION_SOCKET: `/${'s'.repeat(107)}` }, /DETECTION_SOCKET must be at most 107 bytes/],
    [{ DETECTION_CONFIG_CACHE_ENTRIES: '-1' }, /DETECTION_CONFIG_CACHE_ENTRIES must be between 0 and 100000/],
    [{ OPENAI_BASE_URL: 'ftp://x' }, /OPENAI_BASE_URL/],
    [{ JSON_MAX_DEPTH: '4' }, /JSON_MAX_DEPTH: JSON_MAX_DEPTH must be between 8 and 1000 \(got "4"\)/],
    [{ JSON_MAX_DEPTH: '5000' }, /JSON_MAX_DEPTH must be between 8 and 1000/],
  ])('rejects %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never echoes secret values in its messages', () => {
    try {
      loadConfig({ BOOTSTRAP_API_KEY: 'svc_sk_leaky' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).not.toContain('svc_sk_leaky');
    }
  });

  it('reports every bad variable at once', () => {
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'loud' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
    }
  });
});

describe('loadConfig: classifier backend variables', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      OPENAI_MODERATION_URL: 'https://api.openai.com/v1',
      OPENAI_MODERATION_MODEL: 'omni-moderation-latest',
      HTTP_CLASSIFIER_PATH: '/predict',
      HTTP_CLASSIFIER_LABELS: 'MALICIOUS=prompt_attack,INJECTION=prompt_attack,JAILBREAK=jailbreak',
      HTTP_CLASSIFIER_MAX_CHARS: 1200,
      LLM_JUDGE_FORMAT: 'json_object',
      CLASSIFIER_TIMEOUT_MS: 800,
      CLASSIFIER_MAX_CONCURRENCY: 16,
      CLASSIFIER_MAX_QUEUE: 64,
      CLASSIFIER_CACHE_SIZE: 5000,
      CLASSIFIER_CACHE_TTL_MS: 600_000,
      CLASSIFIER_BREAKER_FAILURES: 5,
      CLASSIFIER_BREAKER_COOLDOWN_MS: 30_000,
    });
    const c = loadConfig({ CLASSIFIER_BACKENDS: '', HTTP_CLASSIFIER_URL: '', LLM_JUDGE_URL: '', LLM_JUDGE_MODEL: '' });
    expect(c.CLASSIFIER_BACKENDS).toBeUndefined();
    expect(c.HTTP_CLASSIFIER_URL).toBeUndefined();
    expect(c.LLM_JUDGE_URL).toBeUndefined();
    expect(c.LLM_JUDGE_MODEL).toBeUndefined();
  });

  it('parses given values (0 disables the cache and the queue)', () => {
    const c = loadConfig({
      HTTP_CLASSIFIER_URL: 'http://tei:8080/',
      LLM_JUDGE_FORMAT: 'llama_guard',
      CLASSIFIER_CACHE_SIZE: '0',
      CLASSIFIER_MAX_QUEUE: '0',
      CLASSIFIER_TIMEOUT_MS: '250',
    });
    expect(c).toMatchObject({ HTTP_CLASSIFIER_URL: 'http://tei:8080', LLM_JUDGE_FORMAT: 'llama_guard', CLASSIFIER_CACHE_SIZE: 0, CLASSIFIER_MAX_QUEUE: 0, CLASSIFIER_TIMEOUT_MS: 250 });
  });

  it.each([
    [{ CLASSIFIER_TIMEOUT_MS: '0' }, /CLASSIFIER_TIMEOUT_MS: CLASSIFIER_TIMEOUT_MS must be at least 1/],
    [{ CLASSIFIER_TIMEOUT_MS: 'fast' }, /CLASSIFIER_TIMEOUT_MS must be a number/],
    [{ CLASSIFIER_MAX_CONCURRENCY: '2.5' }, /CLASSIFIER_MAX_CONCURRENCY must be an integer/],
    [{ CLASSIFIER_MAX_QUEUE: '-1' }, /CLASSIFIER_MAX_QUEUE must be between 0 and 100000/],
    [{ CLASSIFIER_CACHE_SIZE: '-5' }, /CLASSIFIER_CACHE_SIZE must be between 0/],
    [{ CLASSIFIER_CACHE_TTL_MS: '0' }, /CLASSIFIER_CACHE_TTL_MS/],
    [{ CLASSIFIER_BREAKER_FAILURES: '0' }, /CLASSIFIER_BREAKER_FAILURES must be at least 1/],
    [{ CLASSIFIER_BREAKER_COOLDOWN_MS: 'soon' }, /CLASSIFIER_BREAKER_COOLDOWN_MS must be a number/],
    [{ OPENAI_MODERATION_URL: 'api.openai.com' }, /OPENAI_MODERATION_URL/],
    [{ HTTP_CLASSIFIER_URL: 'ftp://tei' }, /HTTP_CLASSIFIER_URL must start with http/],
    [{ HTTP_CLASSIFIER_PATH: 'predict' }, /HTTP_CLASSIFIER_PATH must be a path such as \/predict/],
    [{ HTTP_CLASSIFIER_MAX_CHARS: '0' }, /HTTP_CLASSIFIER_MAX_CHARS must be at least 1/],
    [{ LLM_JUDGE_URL: 'localhost:11434' }, /LLM_JUDGE_URL/],
    [{ LLM_JUDGE_FORMAT: 'xml' }, /LLM_JUDGE_FORMAT must be json_object, json or llama_guard/],
  ])('rejects %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('loadConfig: audit spool', () => {
  it('defaults to DATA_DIR/audit-spool (resolved later) and 256 MiB; parses given values', () => {
    expect(loadConfig({})).toMatchObject({ AUDIT_SPOOL_DIR: undefined, AUDIT_SPOOL_MAX_BYTES: 268_435_456 });
    expect(loadConfig({ AUDIT_SPOOL_DIR: '/var/spool/gw', AUDIT_SPOOL_MAX_BYTES: '1048576' })).toMatchObject({
      AUDIT_SPOOL_DIR: '/var/spool/gw',
      AUDIT_SPOOL_MAX_BYTES: 1_048_576,
    });
    expect(loadConfig({ AUDIT_SPOOL_DIR: '' }).AUDIT_SPOOL_DIR).toBeUndefined();
  });

  it.each([
    [{ AUDIT_SPOOL_MAX_BYTES: 'lots' }, /AUDIT_SPOOL_MAX_BYTES must be a number/],
    [{ AUDIT_SPOOL_MAX_BYTES: '0' }, /AUDIT_SPOOL_MAX_BYTES must be at least 1/],
  ])('%j stops start-up with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('loadConfig: audit retention', () => {
  it('keeps everything by default (0 days), runs hourly in batches of 5000; parses given values', () => {
    expect(loadConfig({})).toMatchObject({
      AUDIT_RETENTION_DAYS: 0,
      MANAGEMENT_AUDIT_RETENTION_DAYS: 0,
      AUDIT_RETENTION_INTERVAL_MS: 3_600_000,
      AUDIT_RETENTION_BATCH_SIZE: 5000,
    });
    expect(
      loadConfig({ AUDIT_RETENTION_DAYS: '90', MANAGEMENT_AUDIT_RETENTION_DAYS: '400', AUDIT_RETENTION_INTERVAL_MS: '60000', AUDIT_RETENTION_BATCH_SIZE: '100' }),
    ).toMatchObject({ AUDIT_RETENTION_DAYS: 90, MANAGEMENT_AUDIT_RETENTION_DAYS: 400, AUDIT_RETENTION_INTERVAL_MS: 60_000, AUDIT_RETENTION_BATCH_SIZE: 100 });
  });

  it.each([
    [{ AUDIT_RETENTION_DAYS: '-1' }, /AUDIT_RETENTION_DAYS must be between 0 and 36500/],
    [{ AUDIT_RETENTION_DAYS: '1.5' }, /AUDIT_RETENTION_DAYS must be an integer/],
    [{ MANAGEMENT_AUDIT_RETENTION_DAYS: 'forever' }, /MANAGEMENT_AUDIT_RETENTION_DAYS must be a number/],
    [{ AUDIT_RETENTION_INTERVAL_MS: '0' }, /AUDIT_RETENTION_INTERVAL_MS must be at least 1/],
    [{ AUDIT_RETENTION_BATCH_SIZE: '100001' }, /AUDIT_RETENTION_BATCH_SIZE must be at most 100000/],
  ])('%j stops start-up with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
