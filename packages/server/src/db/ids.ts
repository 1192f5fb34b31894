import { v7 as uuidv7 } from 'uuid';

/** A new time-ordered id (UUIDv7): sortable by creation, which keyset paging relies on. */
export const newId = (): string => uuidv7();
