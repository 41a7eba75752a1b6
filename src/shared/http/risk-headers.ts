import type { FastifyReply } from 'fastify';

export interface RiskSummary {
  blocked: boolean;
  categories: ReadonlyArray<{ type: string; confidence: number }>;
  /** Detector types configured but not scanned (not implemented, errored or timed out under fail-open). */
  unscanned: readonly string[];
}

/** Configured detectors that produced no verdict (failed, overran, or not implemented): never treated as clean. */
export function unscannedOf(result: { outcomes: ReadonlyArray<{ type: string; status: string }> }): string[] {
  return result.outcomes.filter((o) => o.status !== 'ok').map((o) => o.type);
}

/** Highest confidence, 0..1, with at most 3 decimals. */
export function maxConfidence(categories: RiskSummary['categories']): number {
  const max = categories.reduce((m, c) => Math.max(m, c.confidence), 0);
  return Math.round(max * 1000) / 1000;
}

/** Sets X-Risk-Blocked, X-Risk-Categories, X-Risk-Confidence (spec) and X-Risk-Unscanned (ours, when any). */
export function setRiskHeaders(reply: FastifyReply, risk: RiskSummary): void {
  void reply.header('x-risk-blocked', risk.blocked ? 'true' : 'false');
  void reply.header('x-risk-categories', [...new Set(risk.categories.map((c) => c.type))].join(','));
  void reply.header('x-risk-confidence', String(maxConfidence(risk.categories)));
  if (risk.unscanned.length > 0) void reply.header('x-risk-unscanned', risk.unscanned.join(','));
}
