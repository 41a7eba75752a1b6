import type { Json, restClient } from './management-clients';
import type { TestServices } from './services';

/** Reads the audit events of one traffic path through the events API (flushing the writer first). */
export function auditProbe(svc: TestServices, rest: ReturnType<typeof restClient>, path: string) {
  const page = async () => {
    await svc.running.audit!.flush();
    return (await rest.get(`/v1/events/?path=${path}&limit=1`)).json;
  };
  return {
    /** How many events the path has so far. */
    count: async () => (await page()).count as number,
    /** The newest event, once there are more than `after`. */
    async latest(after: number): Promise<Json> {
      for (let i = 0; i < 100; i++) {
        const p = await page();
        if (p.count > after) return p.results[0] as Json;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('no new event');
    },
  };
}

/** The event is blocked, with a `block` finding of `category` that has a match in the field `path`. */
export function expectBlockedAt(event: Json, category: string, path: string): void {
  expect(event.blocked).toBe(true);
  const finding = (event.findings as Json[]).find((f) => f.type === category);
  expect(finding).toBeDefined();
  expect(finding!.action).toBe('block');
  expect((finding!.matches as Json[]).map((m) => m.path)).toContain(path);
}
