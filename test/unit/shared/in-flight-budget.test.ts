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
});
