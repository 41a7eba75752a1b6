import { PHISHING_TARGET_BRANDS } from './lists/link-lists';

/**
 * Look-alike checks against PHISHING_TARGET_BRANDS: bounded edit distance, digit/letter and homoglyph
 * swaps, and brands embedded in a longer label. Linear per brand (distance computed with a cut-off).
 */

const BRANDS = new Set(PHISHING_TARGET_BRANDS);

export function isBrand(label: string): boolean {
  return BRANDS.has(label);
}

/** Latin look-alikes of Cyrillic and Greek letters (the usual IDN homograph set). */
const HOMOGLYPHS: Readonly<Record<string, string>> = {
  а: 'a', е: 'e', о: 'o', р: 'p', с: 'c', у: 'y', х: 'x', і: 'i', ј: 'j', ѕ: 's', ԁ: 'd', ɡ: 'g',
  һ: 'h', ӏ: 'l', ԛ: 'q', ԝ: 'w', ο: 'o', α: 'a', ν: 'v', ρ: 'p', τ: 't', ι: 'i', κ: 'k', ε: 'e',
  υ: 'u', ѵ: 'v', ɩ: 'l', ı: 'i',
};

const DIGIT_SWAPS: Readonly<Record<string, string>> = { '0': 'o', '1': 'l', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '9': 'g', $: 's', '@': 'a' };

/** Folds homoglyphs, digit swaps ("1" read as "l" and as "i") and rn→m, vv→w; drops hyphens. */
export function foldLookalike(label: string): string[] {
  const variants = new Set<string>();
  for (const one of ['l', 'i']) {
    let folded = '';
    for (const ch of label.toLowerCase()) folded += HOMOGLYPHS[ch] ?? (ch === '1' ? one : DIGIT_SWAPS[ch]) ?? ch;
    folded = folded.replace(/-/g, '');
    variants.add(folded);
    variants.add(folded.replace(/rn/g, 'm').replace(/vv/g, 'w'));
  }
  return [...variants];
}

/** Optimal-string-alignment distance, or max+1 as soon as it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const prevPrev = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Array<number>(b.length + 1);
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (prevPrev[j - 2] as number) + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    for (let j = 0; j <= b.length; j++) prevPrev[j] = prev[j] as number;
    prev = cur;
  }
  return prev[b.length] as number;
}

function allowedDistance(brand: string): number {
  if (brand.length >= 8) return 2;
  return brand.length >= 5 ? 1 : 0;
}

const CACHE = new Map<string, string | null>();
const CACHE_LIMIT = 4096;

/**
 * The brand `label` (a registrable label such as "paypa1" or "secure-paypal") imitates, or null. The
 * label and each of its hyphen-separated parts are folded (digit/letter and homoglyph swaps) and then
 * compared with every brand: equal, starting or ending with it ("appleid", "paypalsecure"), containing
 * a brand of 6+ letters, or within a small edit distance (1 for 5–7 letters, 2 for 8+).
 * The caller has already established that the registrable domain is not itself well known.
 */
export function imitatedBrand(label: string): string | null {
  const lower = label.toLowerCase();
  const cached = CACHE.get(lower);
  if (cached !== undefined) return cached;
  const parts = new Set([lower, ...lower.split('-')].filter((p) => p.length >= 4));
  let found: string | null = null;
  for (const part of parts) {
    for (const v of foldLookalike(part)) {
      found = matchBrand(v);
      if (found) break;
    }
    if (found) break;
  }
  if (CACHE.size < CACHE_LIMIT) CACHE.set(lower, found);
  return found;
}

function matchBrand(v: string): string | null {
  if (BRANDS.has(v)) return v;
  for (const brand of BRANDS) {
    if (brand.length >= 5 && v.length > brand.length && (v.startsWith(brand) || v.endsWith(brand))) return brand;
    if (brand.length >= 6 && v.length > brand.length && v.includes(brand)) return brand;
    const max = allowedDistance(brand);
    if (max > 0 && editDistance(v, brand, max) <= max) return brand;
  }
  return null;
}
