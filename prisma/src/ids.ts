import { v7 as uuidv7 } from 'uuid';

/** A new time-ordered id (UUIDv7): sortable by creation, which keyset paging relies on. */
export const newId = (): string => uuidv7();

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * True for a string shaped like the ids we hand out. The contract keeps ids opaque, so any other string is
 * simply an id that does not exist (404); it must never reach a uuid column, where PostgreSQL rejects it.
 */
export const isId = (value: string): boolean => ID.test(value);

const ANY_CASE_ID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

/**
 * An id as a partner may write it: UUIDs compare case-insensitively (RFC 9562), and some platforms print them in
 * upper case, so `0193A1B2-…` is the id `0193a1b2-…`. Anything else is left as it is (and names nothing).
 */
export const canonicalId = (value: string): string => (ANY_CASE_ID.test(value) ? value.toLowerCase() : value);
