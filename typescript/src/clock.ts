/**
 * The trial's clock: the real time plus the offset the harness's handshake
 * carries. A deployment that derives anything from the time (a key from the
 * current hour, an expiry) reads it here and declares the `context-clock`
 * trait, so the harness can move the clock forward between a crash and the
 * retry, as a long outage would.
 */

let offsetMs = 0;

/** Set by the handshake; a deployment never calls it. */
export function setClockOffsetMs(offset: number): void {
  offsetMs = offset;
}

/** Milliseconds since the epoch, as `Date.now()` gives them, on the trial's clock. */
export function nowMs(): number {
  return Date.now() + offsetMs;
}

/** The current time on the trial's clock. */
export function now(): Date {
  return new Date(nowMs());
}
