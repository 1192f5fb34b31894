import type { Db } from './client';

/**
 * An in-process nudge from the request path to an outbox worker: a write that committed an outbox row calls
 * `signal(db)`, and the worker serving that database (`on(db, …)`) wakes at once instead of at its next poll.
 * Other processes find the row by polling; the nudge only makes the common case (the writer's own worker) fast.
 */
export function outboxSignal() {
  const listeners = new WeakMap<Db, Set<() => void>>();
  const on = (db: Db, listener: () => void): (() => void) => {
    let set = listeners.get(db);
    if (!set) listeners.set(db, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  };
  const signal = (db: Db): void => {
    const set = listeners.get(db);
    if (set) for (const listener of set) listener();
  };
  return { on, signal };
}

/** The webhook outbox's: wakes the dispatcher. */
export const { on: onOutboxWrite, signal: signalOutboxWrite } = outboxSignal();
