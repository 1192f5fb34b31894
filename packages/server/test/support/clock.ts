/**
 * Moments relative to the clock the test runs under. A date written into a test passes one day (CI went red on
 * 2026-12-01 when one did), so every future or past moment a test sends is derived from now. On the hour, in UTC,
 * so that a rendered date ("Sunday 1 December 2030, 17:00 UTC") can be compared whole.
 */
const HOUR_MS = 3_600_000;

/** `days` from now (negative: ago), on the hour, as the contract writes a timestamp. */
export function daysFromNow(days: number): string {
  const moment = new Date(Date.now() + days * 24 * HOUR_MS);
  moment.setUTCMinutes(0, 0, 0);
  return moment.toISOString();
}

/** The same moment written with a `+HH:00` offset, as a partner in another time zone may send it. */
export function withOffset(iso: string, hours: number): string {
  const local = new Date(Date.parse(iso) + hours * HOUR_MS).toISOString().slice(0, 19);
  return `${local}+${String(hours).padStart(2, '0')}:00`;
}
