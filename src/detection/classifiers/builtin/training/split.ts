import { readmeNormalize, unitFromKey, type Row } from './dataset';
import { isSynthetic } from './synthetic';

/**
 * The deterministic split, a pure function of the data:
 *
 *   1. Near-duplicate groups: rows whose normalised texts share 8-word shingles are joined (union-find
 *      over 4 min-hashes of the shingle set: two texts with Jaccard similarity J end up in one group with
 *      probability 1 - (1 - J)^4, e.g. 94% at J = 0.5); identical texts in both files are one group.
 *      A group is never split, so held-out rows are not near-copies of training rows.
 *   2. heldout: a group whose hash (salt "heldout") is < HELDOUT_FRACTION. Stratified: every stratum
 *      (file, source, label set) of at least two rows gets at least one held-out row (the group of its
 *      lowest-hash row is moved when none fell there by chance).
 *   3. calibration: of the rest, a group whose hash (salt "calibration") is < CALIBRATION_FRACTION. The
 *      models never train on it; Platt scaling and the cut-off knots are fitted on it.
 */

export const HELDOUT_FRACTION = 0.2;
export const CALIBRATION_FRACTION = 0.15;
const SHINGLE_WORDS = 8;
const MINHASHES = 4;

export interface SplitSummary {
  groups: number;
  largestGroup: number;
  movedForStratification: number;
}

/**
 * Generated rows (synthetic.ts) share their framing templates, so near-duplicate grouping would join
 * thousands of them into one group that lands whole in one split. They are never held out (the
 * evaluation has its own held-out framings and requests); they go to training or calibration by hash.
 */
export function assignSplits(all: Row[]): SplitSummary {
  for (const r of all) if (isSynthetic(r)) r.split = unitFromKey(r.key, 'calibration') < CALIBRATION_FRACTION ? 'calibration' : 'train';
  const rows = all.filter((r) => !isSynthetic(r));
  const groups = nearDuplicateGroups(rows);
  const groupKey = (i: number) => (rows[groups.find(i)] as Row).key;
  let moved = 0;
  const heldGroups = new Set<number>();
  rows.forEach((_, i) => {
    const root = groups.find(i);
    if (unitFromKey(groupKey(i), 'heldout') < HELDOUT_FRACTION) heldGroups.add(root);
  });
  // Stratification: make sure every stratum of >= 2 rows has a held-out row.
  const strata = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const s = `${r.file}|${r.source}|${[...r.labels].sort().join(',')}`;
    (strata.get(s) ?? strata.set(s, []).get(s))?.push(i);
  });
  for (const members of strata.values()) {
    if (members.length < 2 || members.some((i) => heldGroups.has(groups.find(i)))) continue;
    const pick = [...members].sort((a, b) => unitFromKey(groupKey(a), 'heldout') - unitFromKey(groupKey(b), 'heldout'))[0] as number;
    heldGroups.add(groups.find(pick));
    moved++;
  }
  const sizes = new Map<number, number>();
  rows.forEach((r, i) => {
    const root = groups.find(i);
    sizes.set(root, (sizes.get(root) ?? 0) + 1);
    if (heldGroups.has(root)) r.split = 'heldout';
    else r.split = unitFromKey(groupKey(i), 'calibration') < CALIBRATION_FRACTION ? 'calibration' : 'train';
  });
  return { groups: sizes.size, largestGroup: Math.max(...sizes.values()), movedForStratification: moved };
}

class UnionFind {
  private readonly parent: Int32Array;
  constructor(n: number) {
    this.parent = new Int32Array(n);
    for (let i = 0; i < n; i++) this.parent[i] = i;
  }
  find(i: number): number {
    let r = i;
    while (this.parent[r] !== r) r = this.parent[r] as number;
    while (this.parent[i] !== r) {
      const next = this.parent[i] as number;
      this.parent[i] = r;
      i = next;
    }
    return r;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    // The smaller index becomes the root, so group keys do not depend on union order.
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

function nearDuplicateGroups(rows: Row[]): UnionFind {
  const uf = new UnionFind(rows.length);
  const firstByBucket = new Map<string, number>();
  rows.forEach((row, i) => {
    for (const bucket of [`k:${row.key}`, ...minhashes(row.text)]) {
      const first = firstByBucket.get(bucket);
      if (first === undefined) firstByBucket.set(bucket, i);
      else uf.union(first, i);
    }
  });
  return uf;
}

/** The MINHASHES minimum shingle hashes; a text under 8 words has none (exact matches only). */
function minhashes(text: string): string[] {
  const words = readmeNormalize(text).split(' ').filter(Boolean);
  if (words.length < SHINGLE_WORDS) return [];
  const mins = new Array<number>(MINHASHES).fill(0xffffffff);
  for (let i = 0; i + SHINGLE_WORDS <= words.length; i++) {
    const base = fnv(words.slice(i, i + SHINGLE_WORDS).join(' '));
    for (let k = 0; k < MINHASHES; k++) {
      const h = mix(base ^ Math.imul(k + 1, 0x9e3779b1));
      if (h < (mins[k] as number)) mins[k] = h;
    }
  }
  return mins.map((m, k) => `m${k}:${m}`);
}

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
