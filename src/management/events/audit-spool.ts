import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../shared/logger';
import { eventFromJson, eventToJson, type AuditEvent } from './audit-sanitizer';

/** A spooled batch: one file of JSON lines, named `<time>-<seq>-<events>.jsonl` so names sort oldest first. */
interface Segment {
  name: string;
  bytes: number;
  events: number;
}

const SEGMENT = /^(\d{15})-(\d{8})-(\d+)\.jsonl$/;

export interface SpoolStats {
  /** Events waiting in the spool. */
  spooled: number;
  spoolBytes: number;
  /** Events deleted because the spool reached its size cap (oldest first). */
  spoolDropped: number;
  /** Unreadable lines skipped on replay (a file damaged outside the gateway). */
  spoolCorrupt: number;
}

/**
 * Bounded local file queue of audit events, used while the database is unreachable and on shutdown
 * when it cannot be written. Each batch is one file, written to a temporary name, fsynced and renamed
 * (a crash never leaves half a batch); files left by a previous run are replayed first. When the files
 * exceed `maxBytes` the oldest are deleted, counted and logged: the only way an event is ever dropped.
 */
export class AuditSpool {
  private segments: Segment[] = [];
  private seq = 0;
  private readonly counters = { spoolDropped: 0, spoolCorrupt: 0 };

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly logger: Logger,
  ) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir).sort()) {
      const m = SEGMENT.exec(name);
      if (!m) {
        if (name.endsWith('.tmp')) rmSync(join(dir, name), { force: true }); // torn write of a crashed run
        continue;
      }
      this.segments.push({ name, bytes: statSync(join(dir, name)).size, events: Number(m[3]) });
      this.seq = Math.max(this.seq, Number(m[2]) + 1);
    }
    if (this.segments.length > 0) logger.warn({ spooled: this.pendingEvents() }, 'audit spool holds events of an earlier run: replayed once the database answers');
  }

  get pending(): boolean {
    return this.segments.length > 0;
  }

  pendingEvents(): number {
    return this.segments.reduce((n, s) => n + s.events, 0);
  }

  stats(): SpoolStats {
    return { spooled: this.pendingEvents(), spoolBytes: this.segments.reduce((n, s) => n + s.bytes, 0), ...this.counters };
  }

  /** Writes one batch durably (synchronous: also safe in the last moments of a shutdown). */
  append(events: readonly AuditEvent[]): void {
    if (events.length === 0) return;
    const body = events.map((e) => JSON.stringify(eventToJson(e))).join('\n') + '\n';
    const name = `${String(Date.now()).padStart(15, '0')}-${String(this.seq++ % 1e8).padStart(8, '0')}-${events.length}.jsonl`;
    const tmp = join(this.dir, `${name}.tmp`);
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, body);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(this.dir, name));
    this.segments.push({ name, bytes: Buffer.byteLength(body), events: events.length });
    this.enforceCap();
  }

  /** The oldest batch (without removing it): call `remove` once it is written. */
  peek(): { name: string; events: AuditEvent[] } | undefined {
    const seg = this.segments[0];
    if (!seg) return undefined;
    const events: AuditEvent[] = [];
    let corrupt = 0;
    for (const line of readFileSync(join(this.dir, seg.name), 'utf8').split('\n')) {
      if (line === '') continue;
      const e = eventFromJson(line);
      if (e) events.push(e);
      else corrupt++;
    }
    if (corrupt > 0) {
      this.counters.spoolCorrupt += corrupt;
      this.logger.error({ segment: seg.name, corrupt }, 'audit spool: unreadable lines skipped');
    }
    return { name: seg.name, events };
  }

  remove(name: string): void {
    rmSync(join(this.dir, name), { force: true });
    this.segments = this.segments.filter((s) => s.name !== name);
  }

  private enforceCap(): void {
    let bytes = this.segments.reduce((n, s) => n + s.bytes, 0);
    while (bytes > this.maxBytes && this.segments.length > 0) {
      const oldest = this.segments.shift() as Segment;
      rmSync(join(this.dir, oldest.name), { force: true });
      bytes -= oldest.bytes;
      this.counters.spoolDropped += oldest.events;
      this.logger.warn(
        { dropped: oldest.events, totalDropped: this.counters.spoolDropped, maxBytes: this.maxBytes },
        'audit spool full (AUDIT_SPOOL_MAX_BYTES): oldest events dropped',
      );
    }
  }
}
