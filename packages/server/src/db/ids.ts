import { v7 as uuidv7 } from 'uuid';

/** A new time-ordered id (UUIDv7): sortable by creation, which keyset paging relies on. */
export const newId = (): string => uuidv7();

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * True for a string shaped like the ids we hand out. The contract keeps ids opaque, so any other string is
 * simply an id that does not exist (404); it must never reach a uuid column, where PostgreSQL rejects it.
 */
export const isId = (value: string): boolean => ID.test(value);
