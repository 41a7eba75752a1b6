import type { ClassifierScores } from '../backend';
import { calibrate } from './calibration';
import { withDecidingSignals, type StackedHarm } from './deciding-signals';
import { FeatureHasher, type SparseVector } from './features';
import { ATTACK_SIGNALS } from './heuristics';
import { artefactSchema, unpackWeights, type BuiltinArtefact, type HeadSpec } from './model-format';
import {
  DERIVED_CATEGORIES,
  DERIVED_PARENT_CAP,
  MODERATION_CATEGORIES,
  PARENT,
  moderationType,
  type HeadName,
  type ModerationCategory,
} from './taxonomy';
import { windowFeatures, windowScoringInputs, type WindowFeatures } from './window-features';
import { loadSuffixScorer, scoreAdversarialSuffix } from './suffix-perplexity';
import { SUFFIX_PERPLEXITY_SIGNAL } from '../../signals';
import { THRESHOLD_CUTOFFS } from '../../decide';

/**
 * The most logits a single hashed feature may add to a moderation head (BuiltinModel.logits). Hate
 * needs 1.8–2.1 logits to go from a benign prompt's usual 0.35–0.40 to L2; at 1.75 the collision that
 * found this (hate 0.79) still reached 0.753, at 1.5 it stays at 0.70. Held-out recall at L2 moves by at
 * most 2 rows of 104 (illicit_violent) and by ≤ 0.4 points elsewhere (bench/CLASSIFIERS.md).
 */
export const SINGLE_FEATURE_CAP = 1.5;

/** The heads that also score the focus around an attack signal. */
export const ATTACK_HEADS: readonly HeadName[] = ['prompt_attack', 'jailbreak'];

/**
 * The builtin classifier: linear heads over hashed n-grams + heuristic features, calibrated, combined
 * with heuristic / lexicon floors and the moderation taxonomy. Scores one window (the router windows
 * long texts). Pure and synchronous: the same text always gives the same scores.
 */
export class BuiltinModel {
  readonly hasher: FeatureHasher;
  readonly heads: readonly HeadSpec[];
  private readonly weights: Int8Array;
  private readonly headIndex: ReadonlyMap<HeadName, number>;
  /** 1 for the heads the single-feature guard applies to (the moderation heads), 0 for the attack heads. */
  private readonly guarded: Uint8Array;
  /** Per head: the largest contribution (weight × value, before the head's scale) of one hashed entry in the last logits() call. */
  private readonly tops: Float64Array;
  /** Hashed buckets (features at or past this index are the heuristic signals). */
  private readonly buckets: number;

  /**
   * `singleFeatureCap`: the most logits one hashed feature may add to a moderation head (SINGLE_FEATURE_CAP;
   * Infinity turns the guard off, for evaluations that compare with and without it).
   */
  constructor(
    artefact: BuiltinArtefact,
    readonly singleFeatureCap = SINGLE_FEATURE_CAP,
  ) {
    const parsed = artefactSchema.parse(artefact);
    const signalIds = ATTACK_SIGNALS.map((s) => s.id);
    if (parsed.signals.join(',') !== signalIds.join(',')) {
      throw new Error('builtin model: heuristic signals differ from the code (retrain with npm run train)');
    }
    this.hasher = new FeatureHasher(parsed.hashing, signalIds.length);
    this.heads = parsed.heads;
    this.weights = unpackWeights(parsed.weights, this.hasher.dimension, parsed.heads.length);
    this.headIndex = new Map(parsed.heads.map((h, i) => [h.name, i]));
    this.buckets = 1 << parsed.hashing.bits;
    // The attack heads are left out: a short override's verdict legitimately rests on one word pair
    // ("previous instructions"); their false positives on ids come from the suffix scorer, not a bucket.
    this.guarded = Uint8Array.from(parsed.heads, (h) => ((ATTACK_HEADS as readonly string[]).includes(h.name) ? 0 : 1));
    this.tops = new Float64Array(parsed.heads.length);
  }

  /**
   * Raw logits per head, in `heads` order, with the single-feature guard: no one hashed feature adds
   * more than `singleFeatureCap` logits to a moderation head (the excess of the largest one is taken off).
   *
   * Why: buckets are shared by every n-gram that hashes into them, and a few buckets carry a weight
   * learnt from one strong n-gram (hate's largest is the character 4-gram of a slur: 4.3 logits in a
   * short text, more than the 2.1 between a benign text's usual 0.35 and L2). Any other word, 4-gram
   * or word pair that falls into such a bucket — a request id, a hash, a name — then decides the
   * verdict alone: "(request 230pz)" in a benign prompt scored hate 0.77–0.95 (1 of 10,600 of
   * bench:perf's prompts). Genuine content fires many features together (the word, its 4-grams, its
   * word pairs), so its score does not rest on one bucket.
   */
  logits(vector: SparseVector): Float64Array {
    const k = this.heads.length;
    const cap = this.singleFeatureCap;
    const guard = cap !== Infinity;
    let acc: Float64Array;
    if (k === 11) acc = guard ? dot11Top(this.weights, vector, this.buckets, this.tops) : dot11(this.weights, vector);
    else {
      acc = dotK(this.weights, vector, k);
      if (guard) topK(this.weights, vector, k, this.buckets, this.tops);
    }
    for (let h = 0; h < k; h++) {
      const head = this.heads[h] as HeadSpec;
      acc[h] = (acc[h] as number) * head.scale + head.bias;
      if (guard && this.guarded[h] === 1) {
        const excess = (this.tops[h] as number) * head.scale - cap;
        if (excess > 0) acc[h] = (acc[h] as number) - excess;
      }
    }
    return acc;
  }

  features(text: string): WindowFeatures {
    return windowFeatures(this.hasher, text);
  }

  /** Same as combine(windowLogits(features(text)), …), without materialising the feature vectors. */
  scoreWindow(text: string): ClassifierScores {
    const f = windowScoringInputs(this.hasher, text, this.logitsOf);
    return this.combine(this.withFocus(f.z, f.zFocus), f, windowContext(text));
  }

  private readonly logitsOf = (v: SparseVector): Float64Array => this.logits(v);

  /** Logits of the window; the attack heads take the higher of the window and its focus (window-features.ts). */
  windowLogits(f: Pick<WindowFeatures, 'vector' | 'focus'>): Float64Array {
    return this.withFocus(this.logits(f.vector), f.focus ? this.logits(f.focus) : undefined);
  }

  private withFocus(z: Float64Array, zf: Float64Array | undefined): Float64Array {
    if (!zf) return z;
    for (const name of ATTACK_HEADS) {
      const i = this.headIndex.get(name);
      if (i !== undefined) z[i] = Math.max(z[i] as number, zf[i] as number);
    }
    return z;
  }

  /** Calibrated head scores + floors + derived categories + parent closure. */
  combine(logits: Float64Array, f: Pick<WindowFeatures, 'signals' | 'lexicon'>, context: WindowContext = {}): ClassifierScores {
    const { tooShort = false, shortTurn = false, suffix = 0 } = context;
    const head = (name: HeadName): number => {
      const i = this.headIndex.get(name);
      if (i === undefined) return 0;
      return calibrate(logits[i] as number, (this.heads[i] as HeadSpec).calibration);
    };
    // A text of a few words cannot carry an injected instruction on the model's evidence alone (with so
    // few n-grams the score is mostly the prior: "hi" scored 0.751). Its model score is capped below L3;
    // heuristic floors still apply ("ignore previous instructions" is caught by them).
    // A short turn is capped only while no attack signal but a framing one fired: "ignore previous
    // instructions" is short and still an attack on its evidence.
    const signalled = f.signals.hits.some((i) => !FRAMING_SIGNAL_INDICES.has(i));
    const cap = tooShort ? SHORT_TEXT_ATTACK_CAP : shortTurn && !signalled ? SHORT_TURN_ATTACK_CAP : 1;
    const attackHead = (name: HeadName) => Math.min(head(name), cap);
    let jailbreak = Math.max(attackHead('jailbreak'), f.signals.floor.jailbreak);
    // prompt_attack covers every attack, jailbreaks included, through its own head (trained on all of
    // them). Taking max(prompt_attack, jailbreak) was measured and dropped: held-out ROC-AUC 0.977 → 0.965
    // (the union of two heads' false positives costs more recall than jailbreak adds).
    let promptAttack = Math.max(attackHead('prompt_attack'), f.signals.floor.prompt_attack);
    // The same holds for the moderation heads ("lol" scored harassment 0.79): a few-word text reaches L2 on a
    // lexicon floor (slurs, threats, self-harm phrases), not on the model alone.
    const mod = {} as Record<ModerationCategory, number>;
    for (const c of MODERATION_CATEGORIES) {
      if ((DERIVED_CATEGORIES as readonly string[]).includes(c)) continue;
      mod[c] = Math.max(tooShort ? Math.min(head(c as HeadName), SHORT_TEXT_MODERATION_CAP) : head(c as HeadName), f.lexicon.floors[c] ?? 0);
    }
    for (const c of DERIVED_CATEGORIES) {
      const parent = PARENT[c] as ModerationCategory;
      mod[c] = Math.max(f.lexicon.floors[c] ?? 0, Math.min(mod[parent], DERIVED_PARENT_CAP));
    }
    for (const c of MODERATION_CATEGORIES) {
      const parent = PARENT[c];
      if (parent) mod[parent] = Math.max(mod[parent], mod[c]);
    }
    // Stacking: a harmful request (the moderation heads) inside a fiction / hypothetical / role-play
    // framing, or followed by refusal suppression, is a jailbreak at the harm's own confidence. Neither
    // alone is: "write a story about a dragon" and a plain harmful question are not jailbreaks (the latter
    // is moderation's business).
    // An optimised token-soup suffix (suffix-perplexity.ts) counts as a framing too (GCG: harmful request +
    // suffix), at its looser 1%-FPR cut-off; alone, it is an attack from its strict cut-off on.
    const framing: StackedHarm['framing'] | undefined =
      f.signals.hits.find((i) => FRAMING_SIGNAL_INDICES.has(i)) ?? (suffix >= SUFFIX_STACK_CUTOFF ? SUFFIX_PERPLEXITY_SIGNAL : undefined);
    let stacked: StackedHarm | undefined;
    if (framing !== undefined) {
      let harm = 0;
      for (const c of STACKED_HARM) harm = Math.max(harm, mod[c]);
      if (harm >= STACK_MIN_HARM) {
        const boosted = Math.min(1, harm + STACK_BOOST);
        jailbreak = Math.max(jailbreak, boosted);
        promptAttack = Math.max(promptAttack, boosted);
        stacked = { harm: boosted, framing };
      }
    }
    const suffixScore = suffixConfidence(suffix);
    jailbreak = Math.max(jailbreak, suffixScore);
    promptAttack = Math.max(promptAttack, suffixScore);
    const scores: ClassifierScores = { prompt_attack: promptAttack, jailbreak };
    for (const c of MODERATION_CATEGORIES) scores[moderationType(c)] = mod[c];
    return withDecidingSignals(scores, f, stacked, suffixScore);
  }
}

/** Σ_i w[index_i, h] · value_i for every head h (weights row-major: one row of k int8 per feature). */
function dotK(w: Int8Array, vector: SparseVector, k: number): Float64Array {
  const acc = new Float64Array(k);
  for (let i = 0; i < vector.length; i++) {
    const base = (vector.index[i] as number) * k;
    const v = vector.value[i] as number;
    for (let h = 0; h < k; h++) acc[h] = (acc[h] as number) + (w[base + h] as number) * v;
  }
  return acc;
}

/**
 * dotK for the shipped 11 heads, with the accumulators in locals (about 2× faster than the generic loop
 * on a 2,000-char window; the same additions in the same order, so the same result bit for bit).
 */
function dot11(w: Int8Array, vector: SparseVector): Float64Array {
  let a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0;
  const index = vector.index;
  const value = vector.value;
  for (let i = 0; i < vector.length; i++) {
    const b = (index[i] as number) * 11;
    const v = value[i] as number;
    a0 += (w[b] as number) * v;
    a1 += (w[b + 1] as number) * v;
    a2 += (w[b + 2] as number) * v;
    a3 += (w[b + 3] as number) * v;
    a4 += (w[b + 4] as number) * v;
    a5 += (w[b + 5] as number) * v;
    a6 += (w[b + 6] as number) * v;
    a7 += (w[b + 7] as number) * v;
    a8 += (w[b + 8] as number) * v;
    a9 += (w[b + 9] as number) * v;
    a10 += (w[b + 10] as number) * v;
  }
  return Float64Array.of(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10);
}

/**
 * dot11 that also writes, per head, the largest single product weight × value of a hashed entry (index
 * below `buckets`) into `tops`: the single-feature guard's input at no second pass over the vector. The
 * sums are the same additions in the same order as dot11's (bit for bit).
 */
function dot11Top(w: Int8Array, vector: SparseVector, buckets: number, tops: Float64Array): Float64Array {
  let a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0;
  let m0 = 0, m1 = 0, m2 = 0, m3 = 0, m4 = 0, m5 = 0, m6 = 0, m7 = 0, m8 = 0, m9 = 0, m10 = 0;
  const index = vector.index;
  const value = vector.value;
  for (let i = 0; i < vector.length; i++) {
    const idx = index[i] as number;
    const b = idx * 11;
    const v = value[i] as number;
    const t0 = (w[b] as number) * v, t1 = (w[b + 1] as number) * v, t2 = (w[b + 2] as number) * v, t3 = (w[b + 3] as number) * v;
    const t4 = (w[b + 4] as number) * v, t5 = (w[b + 5] as number) * v, t6 = (w[b + 6] as number) * v, t7 = (w[b + 7] as number) * v;
    const t8 = (w[b + 8] as number) * v, t9 = (w[b + 9] as number) * v, t10 = (w[b + 10] as number) * v;
    a0 += t0; a1 += t1; a2 += t2; a3 += t3; a4 += t4; a5 += t5; a6 += t6; a7 += t7; a8 += t8; a9 += t9; a10 += t10;
    if (idx < buckets) {
      if (t0 > m0) m0 = t0;
      if (t1 > m1) m1 = t1;
      if (t2 > m2) m2 = t2;
      if (t3 > m3) m3 = t3;
      if (t4 > m4) m4 = t4;
      if (t5 > m5) m5 = t5;
      if (t6 > m6) m6 = t6;
      if (t7 > m7) m7 = t7;
      if (t8 > m8) m8 = t8;
      if (t9 > m9) m9 = t9;
      if (t10 > m10) m10 = t10;
    }
  }
  tops[0] = m0; tops[1] = m1; tops[2] = m2; tops[3] = m3; tops[4] = m4; tops[5] = m5;
  tops[6] = m6; tops[7] = m7; tops[8] = m8; tops[9] = m9; tops[10] = m10;
  return Float64Array.of(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10);
}

/** The `tops` of dot11Top for any number of heads (a second pass; the shipped model has 11 heads). */
function topK(w: Int8Array, vector: SparseVector, k: number, buckets: number, tops: Float64Array): void {
  tops.fill(0);
  for (let i = 0; i < vector.length; i++) {
    const idx = vector.index[i] as number;
    if (idx >= buckets) continue;
    const v = vector.value[i] as number;
    for (let h = 0; h < k; h++) {
      const t = (w[idx * k + h] as number) * v;
      if (t > (tops[h] as number)) tops[h] = t;
    }
  }
}

/** What combine() needs to know about the window's text besides its features. */
export interface WindowContext {
  tooShort?: boolean;
  shortTurn?: boolean;
  /** The adversarial-suffix score of the window (suffix-perplexity.ts; 0 when no window was scorable). */
  suffix?: number;
}

export function windowContext(text: string): WindowContext {
  return { tooShort: isTooShortForAttack(text), shortTurn: isShortTurn(text), suffix: scoreAdversarialSuffix(withoutMixedScriptWords(text))?.score ?? 0 };
}

const GREEK_CYRILLIC_ARMENIAN = /[\u0370-\u058f]/;
const LETTER_RUN = /[\p{L}\p{M}]+/gu;
const LATIN_LETTER = /[A-Za-z]/;

/**
 * The canonical view folds look-alike letters (normalize/confusables): Greek or Russian prose comes out as
 * words mixing Latin and Greek/Cyrillic letters ("Пoльзoвaтeля"), whose Latin letters read as token soup
 * (a Russian system prompt scored 0.84). The suffix scorer never judges non-Latin script, so such words
 * are blanked (same length, offsets kept); a homoglyph-written instruction is the other views' business.
 */
export function withoutMixedScriptWords(text: string): string {
  if (!GREEK_CYRILLIC_ARMENIAN.test(text)) return text;
  return text.replace(LETTER_RUN, (w) => (LATIN_LETTER.test(w) && GREEK_CYRILLIC_ARMENIAN.test(w) ? ' '.repeat(w.length) : w));
}

/**
 * The suffix scorer's own cut-offs (model/suffix-lm.json, bench/SUFFIX.md): 0.5 is ≤ 0.1% FPR on the
 * calibration benign prompts, so it starts L2 on its own; its ≤ 1% FPR cut-off only stacks with a
 * harmful request.
 */
const SUFFIX_L2_CUTOFF = 0.5;
export const SUFFIX_STACK_CUTOFF = loadSuffixScorer().config.cutoffs['fpr<=1% (cal)'] ?? SUFFIX_L2_CUTOFF;

/** The suffix score on the shared L1–L4 scale: its strict cut-off at L2, its loose one at L4, between them below L3. */
export function suffixConfidence(s: number): number {
  const { L2, L3, L4 } = THRESHOLD_CUTOFFS;
  if (s >= SUFFIX_L2_CUTOFF) return L2 + ((1 - L2) * (s - SUFFIX_L2_CUTOFF)) / (1 - SUFFIX_L2_CUTOFF);
  if (s >= SUFFIX_STACK_CUTOFF) return L4 + ((L3 - L4) * (s - SUFFIX_STACK_CUTOFF)) / (SUFFIX_L2_CUTOFF - SUFFIX_STACK_CUTOFF);
  return 0;
}

/** The framing signals (heuristics.ts) that, with a harmful request, make a jailbreak. */
const FRAMING_SIGNAL_INDICES: ReadonlySet<number> = new Set(
  ATTACK_SIGNALS.flatMap((s, i) => (s.id === 'framing_fiction' || s.id === 'framing_refusal_suppression' ? [i] : [])),
);
/**
 * Moderation categories that make a framed request a jailbreak: requests for dangerous help. Sexual
 * content, hate and harassment in fiction are moderation's call (a romance, a racist villain), not an attack.
 */
const STACKED_HARM: readonly ModerationCategory[] = ['illicit', 'illicit_violent', 'violence', 'sexual_minors', 'self_harm_instructions'];
/** Below L3 the harm evidence is too weak to stack. */
export const STACK_MIN_HARM = 0.5;
/**
 * Harm AND framing is more evidence than harm alone, so the stacked score is the harm plus this much
 * (npm run eval:lofo, usual split; held-out requests in held-out framings): +0 → 41.3% of wrapped harmful
 * requests at L2 with ordinary / injection-looking FPR 0.4% / 1.5%; +0.1 → 47.1% at 0.5% / 1.6%;
 * +0.2 → 53.5% at 0.6% / 1.7%.
 */
export const STACK_BOOST = 0.2;

/** Model-only attack scores of texts shorter than this (in words AND characters) are capped. */
export const SHORT_TEXT_WORDS = 4;
export const SHORT_TEXT_CHARS = 24;
export const SHORT_TEXT_ATTACK_CAP = 0.49;
/** Model-only moderation scores of such texts stay just below L2. */
export const SHORT_TEXT_MODERATION_CAP = 0.74;

/**
 * A short chat turn (under 64 characters): "From now on, please use metric units.", "you dont know
 * anything.", "Ignore my previous message, I found the answer." Its model-only attack score is capped
 * just below L2 unless a heuristic attack signal fired (an override, extraction, persona or delimiter
 * phrase; framing alone does not count), so a short turn needs that evidence to be flagged at L1 or L2;
 * at L3/L4 the model alone still can.
 */
export const SHORT_TURN_CHARS = 64;
export const SHORT_TURN_ATTACK_CAP = 0.74;

export function isShortTurn(text: string): boolean {
  return text.trim().length < SHORT_TURN_CHARS;
}

/** Fewer than 4 words and under 24 characters (both, so short texts in scripts without spaces are not affected). */
export function isTooShortForAttack(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length >= SHORT_TEXT_CHARS) return false;
  const words = trimmed.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  return words.length < SHORT_TEXT_WORDS;
}
