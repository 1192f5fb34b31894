import type { Db } from '@works-api/prisma';
import { applyRequestTransition, newId } from '@works-api/prisma';
import type { Actor } from '../access';
import { ProblemError } from '../errors';
import { checkPrecondition, type Precondition } from '../preconditions';
import type { Schemas } from '../schemas';
import { outboxRow } from '../../webhooks/events';
import { workDiscarded } from '../works/works';
import { type ActionDefinition, allowedActions, decide, type RequestAction, requestActions } from './state-machine';
import { presentRequest, type RequestRef, type RequestRow } from './present';
import { findRequest, findRequestAs, type FoundRequest } from './read';

/** What an action writes on the request besides its status (and `updatedAt`), as `requestActions` says. */
function changesOf(action: RequestAction, note: string | undefined, now: Date) {
  const { stamp, validation, note: noteInto } = requestActions[action] as ActionDefinition;
  return {
    [stamp]: now,
    ...(validation && { validation }),
    ...(noteInto && { [noteInto]: note ?? null }),
  } as Partial<Pick<RequestRow, ActionDefinition['stamp'] | NonNullable<ActionDefinition['note']> | 'validation'>>;
}

// A transition loses a race only to another transition, and a request makes at most three; this bounds retries.
const MAX_TRANSITION_ATTEMPTS = 4;

/**
 * Applies one of the four actions. The update is conditional on the row just read (its status and updatedAt)
 * and on the work still being kept, so of two concurrent conflicting actions exactly one wins; the loser reads
 * again and gets a repeat (200, unchanged) or a conflict (409). An `If-Match` precondition is checked against
 * that same read, so it holds for the row the update applies to (or the loser gets 412).
 */
export async function actOnRequest(db: Db, actor: Actor, transition: Transition) {
  const current = await findRequestAs(db, actor, 'actOnRequest', transition.ref);
  return applyAction(db, { ...transition, by: { type: 'user', userId: actor.userId } }, current);
}

/** One action on one request: its answer or reason (`note`), and the caller's `If-Match` if any. */
export interface Transition {
  ref: RequestRef;
  action: RequestAction;
  note?: string | undefined;
  precondition?: Precondition<Schemas['Request']> | undefined;
}

/**
 * Who a transition is recorded as done by: a member, or the recipient through their answer link; through a link the
 * dev mailbox kept (`throughDevMailbox`), which the tenant's members could read too, so it is marked as such.
 */
export type EventActor = { type: 'user'; userId: string } | { type: 'recipient'; throughDevMailbox: boolean };

/**
 * The one place a transition is applied, for members (`actOnRequest`, after authorization) and for the recipient
 * (domain/recipients): the same statement, the same event and webhook, whoever acts.
 */
export async function applyAction(
  db: Db,
  transition: Transition & {
    /** Who the event records. */
    by: EventActor;
    /** A repeat of the action answers 409 instead of 200 unchanged (the recipient's link acts once). */
    repeatIsConflict?: boolean;
  },
  /** The request as the caller just read it (`findRequestAs`), for the first attempt. */
  read?: FoundRequest,
) {
  const { ref, action, by: eventActor, note, precondition } = transition;
  for (let attempt = 1; attempt <= MAX_TRANSITION_ATTEMPTS; attempt++) {
    const current = attempt === 1 && read ? read : await findRequest(db, ref);
    checkPrecondition(precondition, () => presentRequest(current));
    if (current.work.discardedAt) throw workDiscarded();
    const decision = decide(action, current);
    if (decision.kind === 'repeat' && !transition.repeatIsConflict) return presentRequest(current);
    if (decision.kind !== 'apply') {
      throw new ProblemError(
        'invalid_transition',
        `A ${current.status} request cannot be ${requestActions[action].pastTense}.`,
        {
          currentStatus: current.status,
          allowedActions: allowedActions(current.status),
        },
      );
    }
    const now = new Date();
    const throughDevMailbox = eventActor.type === 'recipient' && eventActor.throughDevMailbox;
    // The row as the update below leaves it: every column it does not set is as just read, since it only applies
    // while status and updatedAt are.
    const presented = presentRequest({
      ...current,
      status: decision.to,
      updatedAt: now,
      ...changesOf(action, note, now),
      ...(throughDevMailbox && { confirmedThroughDevMailbox: true }),
    });
    const event = outboxRow(requestActions[action].event, ref.tenantId, { request: presented }, now, {
      orderingKey: ref.requestId,
    });
    // One statement, so one round trip and atomic: the transition, its event and its webhook (or nothing, when the
    // request changed or its work was discarded since the read).
    const applied = await applyRequestTransition(
      db,
      {
        requestId: ref.requestId,
        workId: ref.workId,
        to: decision.to,
        now: now.toISOString(),
        note: note ?? null,
        from: current.status,
        readUpdatedAt: current.updatedAt.toISOString(),
        eventId: newId(),
        action,
        actorId: eventActor.type === 'user' ? eventActor.userId : null,
        actorType: eventActor.type,
        throughDevMailbox,
      },
      { changes: requestActions[action], outbox: event },
    );
    if (applied.length > 0) {
      db.outbox.webhooks.signal();
      return presented;
    }
    // Someone else changed the request (or discarded the work) in between: look again.
  }
  throw new Error(`request ${ref.requestId}: ${action} kept losing races`);
}
