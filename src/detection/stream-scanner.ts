import { performance } from 'node:perf_hooks';
import type { DetectCategory } from '../shared/detection-client';
import { STREAM_HOLD_BACK_CHARS, type DetectStreamUpdate } from '../shared/detection-stream';
import type { Action } from '../shared/policy';
import { cutoffFor, decide, type RuleResult } from './decide';
import type { DetectionEngine, PreparedScan, PrepareInput, RawScan } from './engine';
import { adaptiveReleasePoint, listPrefixes, type ListPrefixes } from './stream-release';

/**
 * Incremental scanning of a text that arrives in chunks (the DetectStream RPC).
 *
 * The scanner keeps a carry-over buffer, never the whole stream. With W = the window:
 *
 *      released / settled                    |<- lookahead W ->|
 *   ...........[ lookbehind W ][ new region ][  unsettled tail  ]
 *              ^ bufferStart   ^ settledTo    ^ boundary        ^ received
 *
 * Each scan runs the whole engine (all views, all detectors, deny list, custom detectors) on the buffer
 * and reports only the findings that start in [settledTo, boundary): every such finding has at least W
 * characters of text after its start and W before the region, so a signature no longer than W is seen
 * whole, with its context, exactly as in a scan of the whole text; findings starting before settledTo
 * were reported by an earlier scan and are dropped, those starting at or after the boundary are found
 * again by a later one. Hence a finding that straddles chunk boundaries is reported exactly once, with
 * offsets relative to the whole stream. After the scan the boundary becomes settledTo, everything before
 * it may be released to a reader (`releasedUpTo`), and the buffer is trimmed to W characters before it.
 * Memory: O(W + chunk) however long the stream.
 *
 * A scan runs once at least STREAM_MIN_SCAN_CHARS new characters can be settled (so a stream of tiny
 * chunks does not rescan the window for every character), and at the end, where the rest of the text
 * (the tail) is settled too.
 *
 * Incremental release (`holdBackChars` H > 0, what the gateway's stream guard asks for): instead of
 * waiting for W characters after the region, each push that makes text releasable is scanned at once,
 * and the boundary is H characters before the end of what was received, moved back to the start of the
 * run of non-space characters it falls in (never further back than W before the end). So a token no
 * longer than W (a key, an e-mail address, a URL, a number) and any match no longer than H (a card or
 * IBAN written in groups, a phone number, a short address) has arrived whole, and been scanned, before
 * any character of it is released, while the rest of the text is released about H characters behind
 * the model instead of W (an answer shorter than W no longer waits for its end). A longer match made of
 * several tokens can now straddle the boundary: its start is then already settled when the rest arrives,
 * so a localized finding is reported once per (signal, start) rather than only when it starts in the
 * newly settled region; it still blocks everything not yet released. The work per scan stays bounded
 * (lookbehind W + the held tail + the new text), so the characters scanned grow linearly with the
 * stream (`scannedChars`).
 *
 * Adaptive release (`release: 'adaptive'`, what the gateway and the sensor ask for; H = holdBackChars,
 * default STREAM_HOLD_BACK_CHARS): findings are settled exactly as above (the boundary trails the end
 * by H, so every localized finding is judged with H characters of following context), but the text
 * released (`releasedUpTo`, kept in `releasedTo`, never behind settledTo) runs ahead of the boundary:
 * each push that could release text is scanned, and everything scanned is released except
 *   - the tail a detector may still need whole, computed from the text before the scan
 *     (stream-release.ts: the token still arriving, a number in groups with what precedes it, a
 *     trailing run of capitalized words / labels / separators, the first words of a multi-word deny or
 *     allow entry), and
 *   - after the scan, from the start of the first match of a blocking rule that is not settled yet
 *     (found, or below its threshold: it may still fire with more context), and from the boundary while
 *     a blocking classifier scores the window at SUSPICIOUS_SHARE of its cut-off or more.
 * A window-level score is reported by every scan that releases text it covers. So no byte leaves
 * before a scan that covers it, a match a detector found is never released before it is settled, and
 * plain prose goes out as soon as its words are complete. What may be released before a multi-word
 * match completes is listed in stream-release.ts (e.g. a lower-case first name before the surname);
 * the match is still reported when it completes (the straddle rule above) and blocks the rest. Cost:
 * one scan per push instead of one per push past the first H characters (a short answer is scanned
 * per chunk rather than once at its end); each scan still covers only lookbehind W + the unsettled
 * tail + the new text.
 *
 * Limits, by construction: a match longer than W (a PEM block, a huge base64 blob) is reported with
 * the span seen within the window, and blobs longer than W may not be decoded across a boundary.
 * `exact` allow / deny entries can only match at the end, when the whole stream is still in the buffer.
 * The allow list is evaluated on each window, exactly as in Detect: the spans it matches are exempt
 * (allow-spans.ts), the rest of the stream is still scanned and can block; `allowListed` becomes true
 * once an entry has matched in any window (an allow-listed phrase no longer than W is seen whole).
 */

/**
 * Default carry-over window, in UTF-16 characters, on each side of the settled region. 1024 covers
 * every signature the detectors look for (an e-mail address is at most 254 characters, a card or IBAN
 * with separators under 50, a street address or URL a few hundred, a base64 blob hiding an address a
 * few hundred) plus the context words detectors read around a match.
 */
export const STREAM_WINDOW_CHARS = 1024;
export const MIN_STREAM_WINDOW_CHARS = 256;
export const MAX_STREAM_WINDOW_CHARS = 16_384;
/** A scan runs once this many characters can be settled (or at the end of the stream). */
export const STREAM_MIN_SCAN_CHARS = 256;

export interface StreamScannerOptions extends PrepareInput {
  /** Carry-over window; 0 / undefined = STREAM_WINDOW_CHARS, else clamped to MIN..MAX_STREAM_WINDOW_CHARS. */
  windowChars?: number;
  /** Incremental release (see above): characters held back after the released text; 0 / undefined = off. At most the window. */
  holdBackChars?: number;
  /**
   * `fixed` (default): the holdBackChars rule. `adaptive`: release everything scanned except the tail a
   * detector may still need whole (see above); holdBackChars (default STREAM_HOLD_BACK_CHARS) is then
   * H, how long a number or a found match is held and how much following context findings get.
   */
  release?: StreamRelease;
}

export type StreamRelease = 'fixed' | 'adaptive';

const reportKey = (type: string, f: { start: number; signal?: string }) => `${type}\u0000${f.signal ?? ''}\u0000${f.start}`;

/** One white-space character (what ends a token for the release point). */
const SPACE = /\s/;

/** One answer of the scanner: what this scan settled, and the running verdict. */
/** What one scan of the stream reports: the client's DetectStreamUpdate, one definition for both ends. */
export type StreamUpdate = DetectStreamUpdate;

/** Signals of scores over a span of text (not a localized match): see settledResults. */
const WINDOW_LEVEL = /^(heuristic|classifier):/;

/**
 * Adaptive release: a window-level score of a blocking rule at or above this share of its cut-off holds
 * the release at the fixed rule's point (H characters behind) until the window settles. 0.8, not half:
 * the builtin classifiers score ordinary prose at 0.3–0.45, so at half of L2's 0.75 the rule held 74% of
 * the everyday prompts of test/fixtures/classifiers (and bench:perf's prose) as by the fixed rule; at 0.8
 * (0.6 at L2) 11.5%.
 */
const SUSPICIOUS_SHARE = 0.8;

const SEVERITY: Readonly<Record<Action, number>> = { log: 0, alert: 1, block: 2 };

export function streamWindow(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested) || requested <= 0) return STREAM_WINDOW_CHARS;
  return Math.min(MAX_STREAM_WINDOW_CHARS, Math.max(MIN_STREAM_WINDOW_CHARS, Math.floor(requested)));
}

export class StreamScanner {
  private readonly prepared: PreparedScan;
  private readonly window: number;
  /** Incremental release: characters held back after the released text (0: the full window). */
  private readonly holdBack: number;
  /** Adaptive release: the released prefix (at or after settledTo); undefined in the fixed modes. */
  private releasedTo: number | undefined;
  /** Adaptive release: the first words of multi-word deny / allow entries. */
  private readonly prefixes: ListPrefixes | undefined;
  /** Localized findings already reported, by signal and stream start (incremental release only); pruned with the buffer. */
  private readonly reported = new Map<string, number>();
  /** Characters handed to the engine, all scans together. */
  scannedChars = 0;
  /** What had been received at the last scan: a match that straddled the release point ends after it. */
  private lastScanEnd = 0;
  private buffer = '';
  private bufferStart = 0;
  private settledTo = 0;
  private allowListed = false;
  private finished = false;
  private blocked = false;
  private readonly categories = new Map<string, DetectCategory>();
  private readonly reasons: string[] = [];

  /** Validates and compiles the configuration (throws invalid_request like Detect does). */
  constructor(engine: DetectionEngine, options: StreamScannerOptions) {
    this.prepared = engine.prepare(options);
    this.window = streamWindow(options.windowChars);
    const h = options.holdBackChars;
    this.holdBack = h === undefined || !Number.isFinite(h) || h <= 0 ? 0 : Math.min(this.window, Math.floor(h));
    if (options.release === 'adaptive') {
      if (this.holdBack === 0) this.holdBack = Math.min(this.window, STREAM_HOLD_BACK_CHARS);
      this.releasedTo = 0;
      this.prefixes = listPrefixes([options.config.denyList, options.config.allowList]);
    }
  }

  get received(): number {
    return this.bufferStart + this.buffer.length;
  }

  /** Characters currently held (lookbehind + unsettled text): stays O(window + chunk). */
  get buffered(): number {
    return this.buffer.length;
  }

  /** Appends a chunk; scans when enough text can be settled. Calls must not overlap. */
  async push(chunk: string): Promise<StreamUpdate | undefined> {
    if (this.finished) throw new Error('stream already finished');
    this.buffer += chunk;
    if (!this.prepared.scanned) {
      // Nothing to scan: adaptive release lets it go at once, the fixed modes in batches.
      if (this.releasedTo === undefined && this.received - this.settledTo < STREAM_MIN_SCAN_CHARS) return undefined;
      return this.scanUpTo(this.received, false);
    }
    if (this.holdBack > 0) {
      const boundary = this.incrementalBoundary();
      if (this.releasedTo === undefined) return boundary > this.settledTo ? this.scanUpTo(boundary, false) : undefined;
      const release = Math.max(boundary, this.bufferStart + adaptiveReleasePoint(this.buffer, this.window, this.holdBack, this.prefixes));
      if (boundary <= this.settledTo && release <= this.releasedTo) return undefined;
      return this.scanUpTo(boundary, false, release);
    }
    const boundary = this.received - this.window;
    if (boundary - this.settledTo < STREAM_MIN_SCAN_CHARS) return undefined;
    return this.scanUpTo(boundary, false);
  }

  /**
   * Incremental release: H characters before the end, moved back to the start of the run of non-space
   * characters that reaches it (a token still arriving, or just complete, is never split), never more
   * than W before the end.
   */
  private incrementalBoundary(): number {
    const received = this.received;
    let at = received - this.holdBack - this.bufferStart;
    if (at <= 0) return this.bufferStart;
    const floor = Math.max(0, received - this.window - this.bufferStart);
    // A run of non-space characters through `at` (the character before it and the one at it): back to its start.
    if (at < this.buffer.length && !SPACE.test(this.buffer[at]!)) {
      while (at > floor && !SPACE.test(this.buffer[at - 1]!)) at -= 1; // linear in the token, at most W
    }
    return this.bufferStart + Math.max(at, floor);
  }

  /** Ends the stream: scans the rest and returns the last update (`done`). */
  async finish(): Promise<StreamUpdate> {
    if (this.finished) throw new Error('stream already finished');
    const update = await this.scanUpTo(this.received, true);
    this.finished = true;
    return { ...update, done: true };
  }

  /** The running verdict without a scan (nothing newly settled): the answer to an acknowledged chunk. */
  status(): StreamUpdate {
    return this.update({ findings: [], newCategories: [], outcomes: [], elapsedMs: 0 });
  }

  private update(scan: Pick<StreamUpdate, 'findings' | 'newCategories' | 'outcomes' | 'elapsedMs'>): StreamUpdate {
    return {
      ...scan,
      releasedUpTo: this.releasedTo ?? this.settledTo,
      received: this.received,
      blocked: this.blocked,
      categories: [...this.categories.values()].map((c) => ({ ...c })),
      blockReason: this.reasons.join('; '),
      scanned: this.prepared.scanned,
      allowListed: this.allowListed,
      done: false,
    };
  }

  /**
   * Scans the buffer and settles the findings that start before `boundary`. `release` (adaptive mode):
   * how far text may be released, cut back to the start of any match of a blocking rule this scan
   * found that is not settled yet (it starts at or after the boundary).
   */
  private async scanUpTo(boundary: number, final: boolean, release = boundary): Promise<StreamUpdate> {
    const started = performance.now();
    let raw: RawScan | undefined;
    if (this.prepared.scanned) {
      this.scannedChars += this.buffer.length;
      raw = await this.prepared.scan(this.buffer, { wholeText: final && this.bufferStart === 0 });
      if (raw.allowListed) this.allowListed = true;
    }
    const results = raw ? this.settledResults(raw.results, boundary, final, release) : [];
    this.lastScanEnd = this.received;
    const verdict = decide({ results, failed: raw?.failed ?? [], failMode: this.prepared.failMode });
    const newCategories = verdict.categories.filter((c) => this.mergeCategory(c));
    if (verdict.blocked) this.blocked = true;
    for (const reason of verdict.blockReason ? verdict.blockReason.split('; ') : []) {
      if (!this.reasons.includes(reason)) this.reasons.push(reason);
    }
    this.settledTo = Math.max(this.settledTo, boundary);
    if (this.releasedTo !== undefined) {
      const held = final || !raw ? release : Math.min(release, this.firstUnsettledMatch(raw.results, boundary));
      this.releasedTo = Math.max(this.releasedTo, this.settledTo, held);
    }
    this.trim();
    return this.update({
      findings: verdict.findings,
      newCategories,
      outcomes: raw?.outcomes ?? [],
      elapsedMs: Math.round((performance.now() - started) * 1000) / 1000,
    });
  }

  /**
   * The findings this scan settles, in stream offsets: those that start in [settledTo, boundary) (no
   * upper bound at the end). A localized match (signature, list entry, custom pattern) that starts
   * before settledTo was seen whole by an earlier scan. A window-level score (heuristic:, classifier:)
   * spans the text it scored, which starts in the lookbehind: it is kept while it covers text past
   * settledTo — dropping it would miss an attack that follows W characters of anything else.
   */
  private settledResults(results: RuleResult[], boundary: number, final: boolean, release = boundary): RuleResult[] {
    const offset = this.bufferStart;
    const windowLevel = (f: { signal?: string }) => WINDOW_LEVEL.test(f.signal ?? '');
    const settles = (type: string, f: { start: number; end: number; signal?: string }) =>
      f.start >= this.settledTo || (windowLevel(f) && f.end > this.settledTo) || (this.holdBack > 0 && this.unreported(type, f));
    const mapped = results.map((r) => ({
      ...r,
      findings: r.findings
        .map((f) => ({ confidence: f.confidence, start: f.start + offset, end: f.end + offset, signal: f.signal }))
        // A window-level score counts for every scan that may release text it covers (adaptive: up to `release`).
        .filter((f) => settles(r.type, f) && (final || f.start < (windowLevel(f) ? release : boundary))),
    }));
    if (this.holdBack > 0) {
      for (const r of mapped) for (const f of r.findings) if (!windowLevel(f)) this.reported.set(reportKey(r.type, f), f.start);
    }
    return mapped;
  }

  /**
   * Adaptive release: the stream offset of the first localized match of a blocking rule that starts at
   * or after `boundary` (reported by a later scan, once it has H characters of following context); its
   * text is held until then. Matches below the threshold count too: more context may raise them.
   */
  private firstUnsettledMatch(results: RuleResult[], boundary: number): number {
    let first = Infinity;
    for (const r of results) {
      if (r.action !== 'block') continue;
      const suspicious = r.threshold === undefined ? 0 : cutoffFor(r.threshold) * SUSPICIOUS_SHARE;
      for (const f of r.findings) {
        const start = f.start + this.bufferStart;
        if (WINDOW_LEVEL.test(f.signal ?? '')) {
          // A score over the window that does not fire yet but may with more text: release as the fixed rule does.
          if (f.confidence >= suspicious && f.end > boundary) first = Math.min(first, boundary);
        } else if (start >= boundary && start < first) first = start;
      }
    }
    return first;
  }

  /**
   * A localized match that straddled the release point: it starts before settledTo, reaches text new in
   * this scan (so it could not be seen whole before), does not start at the cut edge of the lookbehind
   * (a piece of a word there may look like a match of its own), and was not reported yet.
   */
  private unreported(type: string, f: { start: number; end: number; signal?: string }): boolean {
    if (WINDOW_LEVEL.test(f.signal ?? '') || f.end <= this.lastScanEnd) return false;
    if (this.bufferStart > 0 && f.start <= this.bufferStart) return false;
    return !this.reported.has(reportKey(type, f));
  }

  /** Folds a fired category into the running verdict; true when it is new or its action got more severe. */
  private mergeCategory(next: DetectCategory): boolean {
    const current = this.categories.get(next.type);
    if (!current) {
      this.categories.set(next.type, { ...next });
      return true;
    }
    current.confidence = Math.max(current.confidence, next.confidence);
    if (SEVERITY[next.action] <= SEVERITY[current.action]) return false;
    current.action = next.action;
    return true;
  }

  /** Keeps only the lookbehind before settledTo (and everything after it). */
  private trim(): void {
    const keepFrom = Math.max(this.bufferStart, this.settledTo - this.window);
    if (keepFrom === this.bufferStart) return;
    this.buffer = this.buffer.slice(keepFrom - this.bufferStart);
    this.bufferStart = keepFrom;
    for (const [key, start] of this.reported) if (start < keepFrom) this.reported.delete(key);
  }
}
