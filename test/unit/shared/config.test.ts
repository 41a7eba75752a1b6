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
    });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.BOOTSTRAP_API_KEY).toBeUndefined();
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
    [{ OPENAI_BASE_URL: 'ftp://x' }, /OPENAI_BASE_URL/],
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
