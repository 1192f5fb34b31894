import { ProblemError } from './errors';
import { aboutField, ruleMessages } from './validation-messages';

/**
 * The date-times the contract takes (DateTimeInput): RFC 3339 `date-time`, `YYYY-MM-DDThh:mm:ss`, an optional
 * fraction of a second (any number of digits), then `Z` or `±hh:mm`, `T` and `Z` in upper case: the forms
 * Go, Java, .NET, Python and JavaScript write, and exactly what a generated Zod schema takes
 * (`z.iso.datetime({ offset: true })`). The validator checks the format with `isRealDateTime` and the domain reads
 * the value with `parseDateTime`, so both accept exactly the same strings.
 *
 * JavaScript's Date is no judge of that: `new Date('2026-02-30T10:00:00Z')` is 2 March, and an hour of 25 is an
 * invalid Date. Here a day the month does not have, hour 24 or more, a minute or second of 60 or more (leap
 * seconds included: no clock of ours holds one), or an offset beyond ±23:59 makes the whole value invalid: never
 * moved to another instant.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/**
 * The instant `text` names, in UTC, to the millisecond (digits past the millisecond are dropped, not rounded), or
 * undefined when it is not a real date and time in the accepted form.
 */
export function parseDateTime(text: string): Date | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [, , , , , , , fraction = '', zulu, sign, offsetHours = '0', offsetMinutes = '0'] = match;
  if (text.length > 64) return undefined; // the contract's maxLength: a fraction is no place for a novel
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const [oh, om] = [Number(offsetHours), Number(offsetMinutes)];
  if (!zulu && (oh > 23 || om > 59)) return undefined;
  const millisecond = Number(fraction.padEnd(3, '0').slice(0, 3));
  const offset = zulu ? 0 : (sign === '-' ? -1 : 1) * (oh * 60 + om);
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute - offset, second, millisecond);
  return utc;
}

/** The validator's check of `format: date-time`: what `parseDateTime` reads. */
export const isRealDateTime = (text: string): boolean => parseDateTime(text) !== undefined;

/**
 * A date-time the caller sends that must be in the future (a request's `dueAt`), read as `parseDateTime` does, or a
 * 400 naming the field at `path` (a JSON pointer into the body).
 */
export function futureDateTime(text: string, path: string, now: Date): Date {
  const instant = parseDateTime(text);
  const rule = !instant ? ruleMessages.realDateTime : instant <= now ? ruleMessages.future : undefined;
  if (!rule) return instant!;
  const message = aboutField(path, rule);
  throw new ProblemError('validation_failed', `${message[0]!.toUpperCase()}${message.slice(1)}.`, {
    errors: [{ path, message }],
  });
}
