import type { DetectorType } from '../shared/detector-catalog';
import type { Direction } from '../shared/policy';
import type { TextIndex } from './text-index';

/**
 * The contract every detector implements: one file per detector, one method. A detector reports scored
 * findings with spans; it never decides block/log/alert (the policy does, in decide.ts).
 */

export interface DetectorInput {
  /**
   * The text to scan (the engine passes the normalised text, see normalize.ts). Spans in findings are
   * UTF-16 offsets into this string, end exclusive; the engine maps them back to the original text.
   */
  readonly text: string;
  readonly direction: Direction;
  /**
   * Facts about `text` shared by the detectors (text-index.ts), built once per view by the engine.
   * Optional: a detector called on its own builds its own (textIndexOf).
   */
  readonly index?: TextIndex;
  /**
   * For a view made from another by local edits (the canonical view: escapes decoded, look-alikes
   * folded), the text of that view. Detectors that scan in windows align their windows with it, so a
   * stretch the edits did not touch is the same window in both views (classifier-detector.ts).
   */
  readonly base?: string;
  /**
   * The policy's pii_regions: regions whose national phone formats pii/phone_number reads. Undefined =
   * DEFAULT_PII_REGIONS (shared/policy.ts).
   */
  readonly piiRegions?: readonly string[];
}

export interface DetectorFinding {
  /** 0..1; compared with the cut-off of the threshold configured for this detector. */
  confidence: number;
  start: number;
  end: number;
  /**
   * What fired, for the verdict's explanation (stable ids, never text): `signature:<rule id>` for a rule
   * inside a detector, `classifier:<backend>`, `heuristic:<id>`, `suffix-perplexity`, .... When absent
   * the engine reports `signature:<detector type>` (see signals.ts).
   */
  signal?: string;
}

export interface Detector {
  readonly type: DetectorType;
  /**
   * Scans the text. Must honour `signal` at reasonable intervals if it does long or asynchronous work;
   * throwing is allowed (the engine isolates it and applies the fail mode).
   */
  detect(input: DetectorInput, signal: AbortSignal): Promise<DetectorFinding[]> | DetectorFinding[];
  /**
   * True when this detector's asynchronous work is in-process computation that runs to completion (the
   * builtin classifier, whose windows may be scored by worker threads): the runner then treats it as a
   * synchronous detector, awaiting it without racing the deadline (late findings are kept), so handing
   * the CPU work to another thread does not change what a slow scan reports.
   */
  runsToCompletion?(): boolean;
}

export type DetectorFactory = () => Detector;
