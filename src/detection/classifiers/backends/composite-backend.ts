import type { ClassifierBackend, ClassifierScores, ClassifierType } from '../backend';
import { BackendError, describeError } from './backend-errors';

/**
 * Several backends configured for the same types (e.g. `prompt_attack=builtin,http-classifier`). All are
 * asked concurrently; each type takes the HIGHEST score among the members that answered. If some members
 * fail and at least one answers, the result stands (the failures are visible in the failing members'
 * stats, `degraded` here); only when every member fails does the composite throw (then the engine's fail
 * mode applies). Every member must cover every type of the composite (checked at construction).
 */
export class CompositeBackend implements ClassifierBackend {
  readonly name: string;
  /** Calls where at least one member failed but the result still stood. */
  degraded = 0;

  constructor(
    readonly members: readonly ClassifierBackend[],
    readonly types: readonly ClassifierType[],
  ) {
    if (members.length < 2) throw new Error('a composite backend needs at least two members');
    for (const m of members) {
      const missing = types.filter((t) => !m.types.includes(t));
      if (missing.length > 0) throw new Error(`backend ${m.name} cannot score ${missing.join(', ')}`);
    }
    this.name = members.map((m) => m.name).join('+');
  }

  async classify(text: string, signal: AbortSignal): Promise<ClassifierScores> {
    const settled = await Promise.allSettled(this.members.map((m) => m.classify(text, signal)));
    const answered = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    if (answered.length === 0) {
      const reasons = settled.map((s, i) => {
        const name = (this.members[i] as ClassifierBackend).name;
        const message = describeError((s as PromiseRejectedResult).reason);
        return message.startsWith(name) ? message : `${name}: ${message}`;
      });
      throw new BackendError('all_failed', `every backend failed (${reasons.join('; ')})`);
    }
    if (answered.length < settled.length) this.degraded++;
    const out: ClassifierScores = {};
    for (const type of this.types) {
      const scores = answered.map((a) => a[type]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
      if (scores.length === 0) throw new BackendError('malformed', `${this.name}: no member scored ${type}`);
      out[type] = Math.max(...scores);
    }
    return out;
  }
}
