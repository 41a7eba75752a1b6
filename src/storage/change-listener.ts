import { Client } from 'pg';
import type { Logger } from '../shared/logger';

/**
 * A dedicated PostgreSQL connection that LISTENs on a channel and hands payloads to `onPayload`.
 * Reconnects with backoff; after a reconnect `onReconnect` runs (notifications sent while we were away
 * are lost, so caches must be dropped).
 */
export interface ChangeListenerHandle {
  close(): Promise<void>;
  /** Resolves once the first LISTEN is active. */
  ready: Promise<void>;
}

export function listenForChanges(o: {
  databaseUrl: string;
  channel: string;
  onPayload: (payload: string | undefined) => void;
  onReconnect: () => void;
  logger: Logger;
}): ChangeListenerHandle {
  let client: Client | undefined;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (markReady = r));

  const connect = async (): Promise<void> => {
    if (closed) return;
    const c = new Client({ connectionString: o.databaseUrl, application_name: 'llm-gateway-listener' });
    c.on('notification', (msg) => {
      if (msg.channel === o.channel) o.onPayload(msg.payload);
    });
    c.on('error', (err) => {
      o.logger.warn({ err: err.message }, 'change listener connection error');
      scheduleReconnect(c);
    });
    c.on('end', () => scheduleReconnect(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${o.channel}`);
      if (closed) return void (await c.end().catch(() => undefined));
      client = c;
      if (attempt > 0) o.onReconnect();
      attempt = 0;
      markReady();
    } catch (err) {
      o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'change listener could not connect');
      scheduleReconnect(c);
    }
  };

  const scheduleReconnect = (c: Client) => {
    if (closed || (client !== undefined && client !== c) || timer) return;
    client = undefined;
    c.removeAllListeners('end');
    void c.end().catch(() => undefined);
    attempt += 1;
    const delay = Math.min(30_000, 250 * 2 ** Math.min(attempt, 7));
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
    timer.unref();
  };

  void connect();
  return {
    ready,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      if (c) {
        c.removeAllListeners('end');
        await c.end().catch(() => undefined);
      }
    },
  };
}
