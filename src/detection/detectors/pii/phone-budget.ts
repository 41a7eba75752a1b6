import { parsePhoneNumberFromString, PhoneNumber } from 'libphonenumber-js';
import type { AbortTicker } from './signals';

/**
 * libphonenumber costs ~50 µs a call on a short segment (more on digit soup). Calls are budgeted by
 * COUNT (fruitless ones, and all of them), never by elapsed time, so the same text always gives the same
 * result however loaded the machine is (time is bounded by the engine's per-detector deadline). Running
 * out throws (the engine reports the detector as failed and applies the policy's fail mode) rather than
 * silently skipping the rest of the text. Only machine-made digit walls get there; a long list of real
 * numbers stops at MAX_FINDINGS instead.
 */
export const MAX_FRUITLESS_CALLS = 2000;
export const MAX_LIBRARY_CALLS = 6000;

export class LibraryBudget {
  private fruitless = 0;
  private calls = 0;

  constructor(private readonly ticker: AbortTicker) {}

  /** libphonenumber's validity check of an E.164 number (counted as a call that found one). */
  validate(e164: string): boolean {
    this.ticker.tick();
    this.count(false);
    // Valid for the US (the main country of +1), or for the NANP country its area code belongs to.
    return new PhoneNumber(e164).isValid() || parsePhoneNumberFromString(e164)?.isValid() === true;
  }

  /**
   * Runs a sweep of library calls over regions (one candidate): every call counts towards the total,
   * a sweep that finds nothing counts as one fruitless call.
   */
  sweep<T>(fn: (call: (f: () => void) => void) => T | undefined): T | undefined {
    const result = fn((f) => {
      this.ticker.tick();
      f();
      this.count(false);
    });
    if (result === undefined) this.fruitlessSweep();
    return result;
  }

  /** Runs one library call and accounts for it. */
  call<T extends unknown[]>(fn: () => T): T {
    this.ticker.tick();
    const result = fn();
    this.count(result.length === 0);
    return result;
  }

  private fruitlessSweep(): void {
    this.fruitless++;
    this.check();
  }

  private count(fruitless: boolean): void {
    this.calls++;
    if (fruitless) this.fruitless++;
    this.check();
  }

  private check(): void {
    if (this.fruitless > MAX_FRUITLESS_CALLS || this.calls > MAX_LIBRARY_CALLS) {
      throw new Error('pii/phone_number: too many number-like candidates (digit table or wall); text not fully scanned');
    }
  }
}
