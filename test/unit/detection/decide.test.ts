import { cutoffFor, decide, fires, THRESHOLD_CUTOFFS } from '../../../src/detection/decide';
import { THRESHOLD_LEVELS } from '../../../src/shared/detector-catalog';

describe('threshold cut-offs', () => {
  it('maps L1..L4 to 0.90 / 0.75 / 0.50 / 0.30, one per catalog level', () => {
    expect(THRESHOLD_CUTOFFS).toEqual({ L1: 0.9, L2: 0.75, L3: 0.5, L4: 0.3 });
    expect(Object.keys(THRESHOLD_CUTOFFS).sort()).toEqual(THRESHOLD_LEVELS.map((l) => l.value).sort());
    expect(Object.isFrozen(THRESHOLD_CUTOFFS)).toBe(true);
  });

  it('gets more sensitive from L1 to L4', () => {
    expect(cutoffFor('L1')).toBeGreaterThan(cutoffFor('L2'));
    expect(cutoffFor('L2')).toBeGreaterThan(cutoffFor('L3'));
    expect(cutoffFor('L3')).toBeGreaterThan(cutoffFor('L4'));
  });

  it.each([
    [0.95, 'L1', true],
    [0.9, 'L1', true],
    [0.89, 'L1', false],
    [0.75, 'L2', true],
    [0.74, 'L2', false],
    [0.6, 'L2', false],
    [0.6, 'L3', true],
    [0.5, 'L3', true],
    [0.49, 'L3', false],
    [0.3, 'L4', true],
    [0.29, 'L4', false],
  ] as const)('confidence %d at %s fires: %s', (confidence, threshold, expected) => {
    expect(fires(confidence, threshold)).toBe(expected);
  });
});

describe('decide', () => {
  it('reports one category per fired type with its max confidence, and every finding with fired', () => {
    const verdict = decide({
      failMode: 'closed',
      failed: [],
      results: [
        {
          type: 'pii/email',
          action: 'log',
          threshold: 'L2',
          findings: [
            { confidence: 0.6, start: 0, end: 3 },
            { confidence: 0.8, start: 5, end: 9 },
            { confidence: 0.95, start: 10, end: 20 },
          ],
        },
      ],
    });
    expect(verdict.categories).toEqual([{ type: 'pii/email', confidence: 0.95, action: 'log' }]);
    expect(verdict.findings.map((f) => f.fired)).toEqual([false, true, true]);
    expect(verdict.blocked).toBe(false);
    expect(verdict.blockReason).toBe('');
  });

  it('blocks only for fired categories whose action is block; log and alert never block', () => {
    const base = { type: 'pii/email', threshold: 'L2' as const, findings: [{ confidence: 0.95, start: 0, end: 1 }] };
    for (const action of ['log', 'alert'] as const) {
      expect(decide({ failMode: 'closed', failed: [], results: [{ ...base, action }] }).blocked).toBe(false);
    }
    const blocked = decide({ failMode: 'open', failed: [], results: [{ ...base, action: 'block' }] });
    expect(blocked.blocked).toBe(true);
    expect(blocked.blockReason).toContain('pii/email');
  });

  it('does not block for a block-action finding below its cut-off', () => {
    const verdict = decide({
      failMode: 'closed',
      failed: [],
      results: [{ type: 'pii/email', action: 'block', threshold: 'L1', findings: [{ confidence: 0.8, start: 0, end: 1 }] }],
    });
    expect(verdict.blocked).toBe(false);
    expect(verdict.categories).toEqual([]);
    expect(verdict.findings).toHaveLength(1);
  });

  it('rules without a threshold (deny list, custom) always fire', () => {
    const verdict = decide({
      failMode: 'open',
      failed: [],
      results: [{ type: 'custom/x', action: 'alert', findings: [{ confidence: 1, start: 0, end: 1 }] }],
    });
    expect(verdict.categories).toEqual([{ type: 'custom/x', confidence: 1, action: 'alert' }]);
  });

  it('fail closed blocks for a failed block-action detector and names it; fail open does not', () => {
    const failed = [
      { type: 'jailbreak', action: 'block' as const, status: 'timeout' as const },
      { type: 'prompt_attack', action: 'log' as const, status: 'error' as const },
    ];
    const closed = decide({ failMode: 'closed', failed, results: [] });
    expect(closed.blocked).toBe(true);
    expect(closed.blockReason).toContain('jailbreak timed out');
    expect(closed.blockReason).not.toContain('prompt_attack');
    const open = decide({ failMode: 'open', failed, results: [] });
    expect(open.blocked).toBe(false);
    expect(open.blockReason).toBe('');
  });

  it('merges two rules of the same type with the most severe action', () => {
    const verdict = decide({
      failMode: 'open',
      failed: [],
      results: [
        { type: 'custom/a', action: 'log', findings: [{ confidence: 1, start: 0, end: 1 }] },
        { type: 'custom/a', action: 'block', findings: [{ confidence: 1, start: 2, end: 3 }] },
      ],
    });
    expect(verdict.categories).toEqual([{ type: 'custom/a', confidence: 1, action: 'block' }]);
    expect(verdict.blocked).toBe(true);
  });
});
