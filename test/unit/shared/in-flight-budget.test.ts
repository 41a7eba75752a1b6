import * as grpc from '@grpc/grpc-js';
import { InFlightBudget } from '../../../src/shared/in-flight-budget';
import { serviceError } from '../../../src/shared/grpc-unary';

const KiB = 1024;
const FAR = () => Date.now() + 60_000;

/** Lets every settled promise's callbacks run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('InFlightBudget (size-aware admission of one channel)', () => {
  it('admits requests while their bytes fit, holds the next one until bytes are released', async () => {
    const budget = new InFlightBudget(256 * KiB, serviceError);
    const first = await budget.admit(128 * KiB, FAR());
    const second = await budget.admit(128 * KiB, FAR());
    let thirdAdmitted = false;
    const third = budget.admit(64 * KiB, FAR()).then((release) => {
      thirdAdmitted = true;
      return release;
    });
    await flush();
    expect(thirdAdmitted).toBe(false);
    first();
    (await third)();
    expect(thirdAdmitted).toBe(true);
    second();
  });

  it('small requests count as one unit each', async () => {
    const budget = new InFlightBudget(128 * KiB, serviceError); // two 64 KiB units
    const releases = [await budget.admit(10, FAR()), await budget.admit(1000, FAR())];
    let admitted = false;
    const next = budget.admit(1, FAR()).then((r) => ((admitted = true), r));
    await flush();
    expect(admitted).toBe(false);
    releases.forEach((release) => release());
    (await next)();
    expect(admitted).toBe(true);
  });

  it('a request larger than the whole budget is admitted alone rather than never', async () => {
    const budget = new InFlightBudget(128 * KiB, serviceError);
    const release = await budget.admit(10 * 1024 * KiB, FAR());
    let admitted = false;
    const next = budget.admit(1, FAR()).then((r) => ((admitted = true), r));
    await flush();
    expect(admitted).toBe(false);
    release();
    (await next)();
    expect(admitted).toBe(true);
  });

  it('a wait that outlasts the deadline fails with DEADLINE_EXCEEDED and leaves the budget intact', async () => {
    const budget = new InFlightBudget(64 * KiB, serviceError);
    const held = await budget.admit(64 * KiB, FAR());
    const err = await budget.admit(1, Date.now() + 5).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED, details: expect.stringContaining('in-flight capacity') });
    held();
    // The timed-out waiter gave its turn back: the whole budget is available again.
    (await budget.admit(64 * KiB, FAR()))();
  });

  it('tryAdmit takes bytes that fit at once, and gives nothing while they do not fit', async () => {
    const budget = new InFlightBudget(128 * KiB, serviceError); // two 64 KiB units
    const first = budget.tryAdmit(64 * KiB);
    expect(first).toBeInstanceOf(Function);
    expect(budget.tryAdmit(128 * KiB)).toBeUndefined();
    const second = budget.tryAdmit(10)!;
    expect(budget.tryAdmit(1)).toBeUndefined();
    // A waiter is admitted by a release of what tryAdmit took.
    let admitted = false;
    const next = budget.admit(1, FAR()).then((r) => ((admitted = true), r));
    await flush();
    expect(admitted).toBe(false);
    first!();
    (await next)();
    expect(admitted).toBe(true);
    second();
    expect(budget.tryAdmit(128 * KiB)).toBeInstanceOf(Function);
  });

  it('tryAdmit never overtakes a waiting call (first come, first served), even when its own bytes would fit', async () => {
    const budget = new InFlightBudget(256 * KiB, serviceError); // four units
    const held = budget.tryAdmit(192 * KiB)!; // three
    let bigAdmitted = false;
    const big = budget.admit(128 * KiB, FAR()).then((r) => ((bigAdmitted = true), r)); // needs two: waits
    await flush();
    expect(bigAdmitted).toBe(false);
    expect(budget.tryAdmit(1)).toBeUndefined(); // one unit is free, but a call waits
    held();
    const releaseBig = await big;
    expect(bigAdmitted).toBe(true);
    // Nobody waits any more: the two units left are taken at once.
    const small = budget.tryAdmit(128 * KiB);
    expect(small).toBeInstanceOf(Function);
    small!();
    releaseBig();
  });

  it("a release function of tryAdmit releases once, however often it is called", async () => {
    const budget = new InFlightBudget(128 * KiB, serviceError);
    const release = budget.tryAdmit(64 * KiB)!;
    release();
    release();
    expect(budget.tryAdmit(128 * KiB)).toBeInstanceOf(Function);
    expect(budget.tryAdmit(1)).toBeUndefined(); // the budget did not grow past its two units
  });

  it('a timed-out waiter stops holding tryAdmit back', async () => {
    const budget = new InFlightBudget(128 * KiB, serviceError);
    const held = budget.tryAdmit(64 * KiB)!;
    await budget.admit(128 * KiB, Date.now() + 5).then(
      () => {
        throw new Error('admitted past its deadline');
      },
      () => undefined,
    );
    expect(budget.tryAdmit(64 * KiB)).toBeInstanceOf(Function);
    held();
  });
});
