/**
 * An in-process nudge from the request path to an outbox worker: a write that committed an outbox row calls
 * `signal()`, and the worker serving that database (`on(…)`) wakes at once instead of at its next poll.
 * Other processes find the row by polling; the nudge only makes the common case (the writer's own worker) fast.
 */
export interface OutboxSignal {
  on(listener: () => void): () => void;
  signal(): void;
}

export function outboxSignal(): OutboxSignal {
  const listeners = new Set<() => void>();
  return {
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signal() {
      for (const listener of listeners) listener();
    },
  };
}

/** The outboxes of one database: the webhook outbox wakes the dispatcher, the mail outbox the mail sender. */
export interface OutboxSignals {
  readonly webhooks: OutboxSignal;
  readonly mail: OutboxSignal;
}
