import type { Db } from './client';

/**
 * An in-process nudge from the request path to the webhook dispatcher: a write that committed an outbox row calls
 * `signalOutboxWrite(db)`, and the dispatcher serving that database wakes at once instead of at its next poll.
 * Other processes find the row by polling; the nudge only makes the common case (the writer's own dispatcher) fast.
 */
const listeners = new WeakMap<Db, Set<() => void>>();

export function onOutboxWrite(db: Db, listener: () => void): () => void {
  let set = listeners.get(db);
  if (!set) listeners.set(db, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

export function signalOutboxWrite(db: Db): void {
  const set = listeners.get(db);
  if (set) for (const listener of set) listener();
}
