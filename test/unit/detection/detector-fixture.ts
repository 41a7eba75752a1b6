import type { Detector, DetectorFinding } from '../../../src/detection/detector';
import { DetectorRegistry } from '../../../src/detection/registry';
import type { DetectorType } from '../../../src/shared/detector-catalog';

/** A detector that records its calls and returns fixed findings. */
export function spyDetector(type: DetectorType, findings: DetectorFinding[] = []) {
  const calls: string[] = [];
  const detector: Detector = {
    type,
    detect: (input) => {
      calls.push(input.text);
      return findings;
    },
  };
  return { detector, calls };
}

export function registryOf(detectors: Detector[]): DetectorRegistry {
  return new DetectorRegistry(new Map(detectors.map((d) => [d.type, () => d] as const)));
}
