import { OwnLoad, othersLeaveACore } from '../../../../src/detection/classifiers/builtin/builtin-pool';

/** A clock and a CPU counter the test moves by hand. */
function fakeProcess() {
  const state = { now: 0, cpu: 0 };
  const load = new OwnLoad(
    () => state.now,
    () => state.cpu,
  );
  /** `seconds` of wall time during which the process kept `cores` cores busy. */
  const run = (seconds: number, cores: number) => {
    state.now += seconds * 1000;
    state.cpu += seconds * 1000 * cores;
  };
  return { load, run };
}

describe('OwnLoad: this process’s share of the 1-minute load average', () => {
  it('starts at 0 and follows the CPU the process uses, averaged like the kernel’s 1-minute load', () => {
    const { load, run } = fakeProcess();
    expect(load.get()).toBe(0);
    run(4, 2);
    expect(load.get()).toBe(0); // no 5-second period elapsed yet
    run(1, 2);
    const afterFive = load.get();
    expect(afterFive).toBeCloseTo(2 * (1 - Math.exp(-5 / 60)), 10);
    // Two busy cores for three minutes: the kernel's figure for two running threads is about 2 by then.
    for (let i = 0; i < 36; i++) {
      run(5, 2);
      load.get();
    }
    expect(load.get()).toBeGreaterThan(1.9);
    expect(load.get()).toBeLessThanOrEqual(2);
    // Idle for three minutes: back towards 0.
    for (let i = 0; i < 36; i++) {
      run(5, 0);
      load.get();
    }
    expect(load.get()).toBeLessThan(0.1);
  });

  it('a long pause counts as periods of the average use over it (no jump, no division by zero)', () => {
    const { load, run } = fakeProcess();
    run(60, 1);
    const v = load.get();
    expect(v).toBeGreaterThan(0.5);
    expect(v).toBeLessThan(1);
    expect(load.get()).toBe(v); // asked again at once: unchanged
  });
});

describe('othersLeaveACore: whether the detection thread may help the classifier workers', () => {
  it('leaves the process’s own load out: busy alone on 2 cores with one worker, it still helps', () => {
    expect(othersLeaveACore(1, 2.0, 1.9, 2)).toBe(true);
    expect(othersLeaveACore(1, 0.2, 0, 2)).toBe(true);
  });

  it('does not help while other processes hold a core (a third compute-bound thread made a 1 MB scan slower)', () => {
    expect(othersLeaveACore(1, 3.0, 1.9, 2)).toBe(false);
    expect(othersLeaveACore(1, 1.0, 0, 2)).toBe(false);
    expect(othersLeaveACore(1, 7.5, 2, 2)).toBe(false);
  });

  it('an estimate of its own load above the load average counts as no other load, never as negative', () => {
    expect(othersLeaveACore(1, 0.5, 2, 2)).toBe(true);
    expect(othersLeaveACore(2, 0.5, 2, 2)).toBe(false);
  });
});
