/**
 * The request lifecycle: pending → confirmed → validated; cancelled is final.
 *
 * Pure rules only. Applying a transition atomically (a conditional update) is the repository's job; this module
 * says which statuses an action may start from, what it leads to, and how to answer when it may not.
 */
import type { WebhookEventType } from '../../webhooks/events';

export type RequestStatus = 'pending' | 'confirmed' | 'validated' | 'cancelled';
export type RequestAction = 'confirm' | 'validate' | 'early_validate' | 'cancel';
export type Validation = 'standard' | 'early';

/**
 * Everything an action does, written once: where it may start and what it leads to (the state machine), what it
 * writes on the request besides its status (requests.ts derives both the presented row and the UPDATE from it),
 * the webhook event it produces, and how a refusal names it. The bench's baseline reads this table too.
 */
export interface ActionDefinition {
  from: readonly RequestStatus[];
  to: RequestStatus;
  /** Set on the request by this action, so that a repeat can be told from a conflict. */
  validation?: Validation;
  /** The request's timestamp set to the action's time. */
  stamp: 'confirmedAt' | 'validatedAt' | 'cancelledAt';
  /** Where the action's note (the recipient's answer, the reason) is kept; actions without one ignore it. */
  note?: 'answer' | 'cancelReason';
  /** The webhook event: validate and early_validate are both `request.validated`. */
  event: WebhookEventType;
  /** "A confirmed request cannot be …". */
  pastTense: string;
}

export const requestActions = {
  confirm: {
    from: ['pending'],
    to: 'confirmed',
    stamp: 'confirmedAt',
    note: 'answer',
    event: 'request.confirmed',
    pastTense: 'confirmed',
  },
  validate: {
    from: ['confirmed'],
    to: 'validated',
    validation: 'standard',
    stamp: 'validatedAt',
    event: 'request.validated',
    pastTense: 'validated',
  },
  early_validate: {
    from: ['pending', 'confirmed'],
    to: 'validated',
    validation: 'early',
    stamp: 'validatedAt',
    event: 'request.validated',
    pastTense: 'validated early',
  },
  cancel: {
    from: ['pending', 'confirmed'],
    to: 'cancelled',
    stamp: 'cancelledAt',
    note: 'cancelReason',
    event: 'request.cancelled',
    pastTense: 'cancelled',
  },
} as const satisfies Record<RequestAction, ActionDefinition>;

const transitions: Readonly<Record<RequestAction, ActionDefinition>> = requestActions;

const actionOrder = Object.keys(requestActions) as RequestAction[];

/** The actions that would change a request in this status. */
export function allowedActions(status: RequestStatus): RequestAction[] {
  return actionOrder.filter((action) => transitions[action].from.includes(status));
}

export interface RequestState {
  status: RequestStatus;
  validation: Validation | null;
}

export type Decision =
  | { kind: 'apply'; from: readonly RequestStatus[]; to: RequestStatus }
  | { kind: 'repeat' }
  | { kind: 'conflict'; currentStatus: RequestStatus; allowedActions: RequestAction[] };

/**
 * What `action` does to a request in `state`: apply the transition, answer a repeat of the action that
 * produced the current state with the request unchanged, or refuse.
 */
export function decide(action: RequestAction, state: RequestState): Decision {
  const transition = transitions[action];
  if (transition.from.includes(state.status)) {
    return { kind: 'apply', from: transition.from, to: transition.to };
  }
  if (producedBy(action, state)) return { kind: 'repeat' };
  return { kind: 'conflict', currentStatus: state.status, allowedActions: allowedActions(state.status) };
}

function producedBy(action: RequestAction, state: RequestState): boolean {
  const transition = transitions[action];
  if (state.status !== transition.to) return false;
  return transition.validation === undefined || transition.validation === state.validation;
}
