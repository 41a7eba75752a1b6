import type { EntityManager } from 'typeorm';

/**
 * "Changing a policy takes effect at once for every project linked to it." Every management write
 * publishes a change inside its transaction (pg_notify is delivered only on commit, to every instance
 * listening on the same database); this instance's subscribers are also called right after commit, so
 * the instance that made the change never serves a stale policy even for a moment.
 */
export const CHANGE_CHANNEL = 'gateway_changes';

export interface ChangeEvent {
  organizationId: string;
  kind: 'policy' | 'project';
}

export type ChangeListener = (event: ChangeEvent) => void;

export class ChangeBus {
  private readonly listeners = new Set<ChangeListener>();

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Call inside the writing transaction: queues the cross-instance notification for commit. */
  async publishInTransaction(m: EntityManager, event: ChangeEvent): Promise<void> {
    await m.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, JSON.stringify(event)]);
  }

  /** Delivers an event to this instance's listeners (after commit, or when a notification arrives). */
  emitLocal(event: ChangeEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        /* a listener must not break the others */
      }
    }
  }

  /** Parses a notification payload from another instance; ignores anything malformed. */
  emitRemote(payload: string | undefined): void {
    if (!payload) return;
    try {
      const e = JSON.parse(payload) as Partial<ChangeEvent>;
      if (typeof e.organizationId === 'string' && (e.kind === 'policy' || e.kind === 'project')) {
        this.emitLocal({ organizationId: e.organizationId, kind: e.kind });
      }
    } catch {
      /* not ours */
    }
  }
}
