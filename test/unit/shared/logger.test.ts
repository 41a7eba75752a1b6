import Fastify from 'fastify';
import { createLogger, REDACTED, requestLogger } from '../../../src/shared/logger';
import { createHttpApp } from '../../../src/shared/http/create-app';
import { until } from '../../helpers/until';

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (s: string) => void lines.push(s) }, json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('logger', () => {
  it('requestLogger writes to the same destination with the bindings and level of the logger it is made from', () => {
    const sink = capture();
    const logger = createLogger({ level: 'info', destination: sink.destination }).child({ component: 'gateway' });
    const lean = requestLogger(logger);
    lean.info({ requestId: 'r1' }, 'request completed');
    logger.info({ body: 'secret text' }, 'other');
    const [a, b] = sink.json();
    expect(a).toMatchObject({ service: 'llm-content-security-gateway', component: 'gateway', level: 'info', requestId: 'r1', msg: 'request completed' });
    // Every key once (JSON.parse keeps the last of a repeated key, which would hide a duplicate).
    for (const key of ['service', 'component', 'level', 'requestId']) expect(sink.lines[0]!.split(`"${key}":`)).toHaveLength(2);
    // The logger itself still redacts (the second line of defence for objects handed in by callers).
    expect(b).toMatchObject({ component: 'gateway', body: REDACTED });

    const quiet = capture();
    requestLogger(createLogger({ level: 'warn', destination: quiet.destination })).info('not at warn');
    expect(quiet.lines).toHaveLength(0);
  });

  it('a logger not made by createLogger is used as it is', () => {
    const app = Fastify();
    expect(requestLogger(app.log as never)).toBe(app.log);
  });

  it('one line per completed request: id, method, path without query, status, time; no headers, no body', async () => {
    const sink = capture();
    const app = createHttpApp({ logger: createLogger({ level: 'info', destination: sink.destination }), bodyLimitBytes: 2 << 20, envelope: 'standard' });
    app.post('/echo', async () => ({ ok: true }));
    try {
      const body = JSON.stringify({ content: 'x'.repeat(1 << 20) });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const res = await fetch(`${url}/echo?key=sk-secret`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-secret', 'x-request-id': 'req-1' }, body });
      expect(res.status).toBe(200);
      await res.text();
      // The line is written once the response has finished.
      const lines = await until(async () => {
        const done = sink.json().filter((l) => l.msg === 'request completed');
        return done.length > 0 ? done : undefined;
      });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ requestId: 'req-1', req: { method: 'POST', path: '/echo', id: 'req-1' }, res: { statusCode: 200 } });
      expect(typeof lines[0]?.responseTime).toBe('number');
      const raw = sink.lines.find((l) => l.includes('"request completed"'))!;
      for (const key of ['service', 'requestId', 'req', 'res', 'level']) expect(raw.split(`"${key}":`)).toHaveLength(2);
      const all = sink.lines.join('');
      expect(all).not.toContain('sk-secret');
      expect(all).not.toContain('xxxxxxxx');
      expect(all.length).toBeLessThan(2000);
    } finally {
      await app.close();
    }
  });
});
