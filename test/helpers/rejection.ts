import { AppError } from '../../src/shared/errors';

/** The AppError a promise rejects with (fails the test when it resolves or rejects with anything else). */
export async function rejectionOf(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}
