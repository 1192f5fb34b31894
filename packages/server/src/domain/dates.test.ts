import { isRealDateTime, parseDateTime } from './dates';

describe('parseDateTime: RFC 3339 date-times, real ones only, never moved', () => {
  it.each([
    ['2026-11-26T10:00:00Z', '2026-11-26T10:00:00.000Z'],
    ['2026-11-26T10:00:00.123Z', '2026-11-26T10:00:00.123Z'],
    ['2026-11-26T12:00:00+02:00', '2026-11-26T10:00:00.000Z'],
    ['2026-11-26T00:30:00-05:30', '2026-11-26T06:00:00.000Z'],
    ['2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000Z'],
    ['2026-11-26T10:00:00.1Z', '2026-11-26T10:00:00.100Z'],
    // .NET's "o" format has 7 digits, Go's RFC3339Nano up to 9, Python's 6: cut at the millisecond, not rounded.
    ['2026-11-26T10:00:00.9999999Z', '2026-11-26T10:00:00.999Z'],
    ['2026-11-26T10:00:00.123456789+00:00', '2026-11-26T10:00:00.123Z'],
    ['2026-11-26T10:00:00.1234567890Z', '2026-11-26T10:00:00.123Z'],
    ['2028-02-29T10:00:00Z', '2028-02-29T10:00:00.000Z'],
    ['2000-02-29T10:00:00Z', '2000-02-29T10:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseDateTime(text)?.toISOString()).toBe(iso);
    expect(isRealDateTime(text)).toBe(true);
  });

  it.each([
    ['30 February', '2026-02-30T10:00:00Z'],
    ['29 February of a common year', '2026-02-29T10:00:00Z'],
    ['29 February of 1900', '1900-02-29T10:00:00Z'],
    ['31 April', '2026-04-31T10:00:00Z'],
    ['month 13', '2026-13-01T10:00:00Z'],
    ['month 0', '2026-00-10T10:00:00Z'],
    ['day 0', '2026-11-00T10:00:00Z'],
    ['hour 24', '2026-11-26T24:00:00Z'],
    ['hour 25', '2026-03-01T25:00:00Z'],
    ['minute 60', '2026-11-26T10:60:00Z'],
    ['a leap second', '2016-12-31T23:59:60Z'],
    ['an offset of 24 hours', '2026-11-26T10:00:00+24:00'],
    ['an offset of 60 minutes', '2026-11-26T10:00:00+01:60'],
    ['no offset', '2026-11-26T10:00:00'],
    ['no seconds', '2026-11-26T10:00Z'],
    ['a space for T', '2026-11-26 10:00:00Z'],
    ['an offset without a colon', '2026-11-26T10:00:00+0200'],
    ['an hour-only offset', '2026-11-26T10:00:00+02'],
    ['a lower-case t and z', '2026-11-26t10:00:00z'],
    ['over 64 characters', `2026-11-26T10:00:00.${'1'.repeat(50)}Z`],
    ['an empty fraction', '2026-11-26T10:00:00.Z'],
    ['a date alone', '2026-11-26'],
    ['a final newline', '2026-11-26T10:00:00Z\n'],
    ['non-ASCII digits', '２０２６-11-26T10:00:00Z'],
    ['a Unix time', '1795421100'],
  ])('refuses %s', (_, text) => {
    expect(parseDateTime(text)).toBeUndefined();
    expect(isRealDateTime(text)).toBe(false);
  });
});
