import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';

/**
 * Linux keeps a nice value per thread (worker-pool.ts niceSource): the nice value of every thread of this
 * process, from /proc/self/task/<tid>/stat (field 19).
 */
export function threadNices(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // a thread that ended meanwhile
    }
  });
}

/** Threads of this process at exactly `nice`. */
export const threadsAtNice = (nice: number): number => threadNices().filter((n) => n === nice).length;

/** `it` where per-thread nice values can be checked: Linux, and a test process that was not started niced itself. */
export const itWithThreadNice: jest.It = process.platform === 'linux' && getPriority() === 0 ? it : it.skip;
