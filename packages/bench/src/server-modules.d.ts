// The few pure functions of the server that the baseline reuses (the server's build emits no declarations),
// so that both sides spend the same CPU on slugs, ids and the state machine.
declare module '@works-api/server/dist/domain/slug' {
  export function slugify(name: string, fallback: string): string;
  export function nextFreeSlug(base: string, taken: ReadonlySet<string>): string;
  export function slugCandidatesPrefix(base: string): string;
}

declare module '@works-api/server/dist/db/ids' {
  export function newId(): string;
}

declare module '@works-api/server/dist/domain/requests/state-machine' {
  export type RequestStatus = 'pending' | 'confirmed' | 'validated' | 'cancelled';
  export type RequestAction = 'confirm' | 'validate' | 'early_validate' | 'cancel';
  export type Decision =
    | { kind: 'apply'; from: readonly RequestStatus[]; to: RequestStatus }
    | { kind: 'repeat' }
    | { kind: 'conflict'; currentStatus: RequestStatus; allowedActions: RequestAction[] };
  export function decide(action: RequestAction, state: { status: RequestStatus; validation: string | null }): Decision;
}
