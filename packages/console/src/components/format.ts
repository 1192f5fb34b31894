import type { UserRecord } from '../api/types';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A timestamp of the API (ISO 8601 UTC) in the reader's time zone and language. */
export const formatTime = (iso: string): string => dateTime.format(new Date(iso));

export const personName = (user: Pick<UserRecord, 'firstName' | 'lastName'>): string =>
  [user.firstName, user.lastName].filter(Boolean).join(' ');
