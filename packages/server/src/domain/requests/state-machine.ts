/**
 * The request lifecycle: pending → confirmed → validated; cancelled is final.
 *
 * Pure rules only. Applying a transition atomically (a conditional update) is the repository's job; this module
 * says which statuses an action may start from, what it leads to, and how to answer when it may not.
 */
export type RequestStatus = 'pending' | 'confirmed' | 'validated' | 'cancelled';
export type RequestAction = 'confirm' | 'validate' | 'early_validate' | 'cancel';
export type Validation = 'standard' | 'early';

interface Transition {
  from: readonly RequestStatus[];
  to: RequestStatus;
  /** Set on the request by this action, so that a repeat can be told from a conflict. */
  validation?: Validation;
}

export const transitions: Readonly<Record<RequestAction, Transition>> = {
  confirm: { from: ['pending'], to: 'confirmed' },
  validate: { from: ['confirmed'], to: 'validated', validation: 'standard' },
  early_validate: { from: ['pending', 'confirmed'], to: 'validated', validation: 'early' },
  cancel: { from: ['pending', 'confirmed'], to: 'cancelled' },
};

const actionOrder: readonly RequestAction[] = ['confirm', 'validate', 'early_validate', 'cancel'];

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
