import { requiredScopes, scopes } from '@works-api/client';
import type { Scope } from './types';

/**
 * The scopes a person may pick for a restricted key, grouped by resource, all read from the contract through the
 * client (`scopes`, the `Scope` enum in its order; `requiredScopes`, each operation's `x-required-scope`), so a scope
 * added to the contract shows up here with no edit.
 */

// `scopes` must be the whole enum: a scope the list missed would be one the console could never offer.
type Unlisted = Exclude<Scope, (typeof scopes)[number]>;
type IsTrue<T extends true> = T;
export type EveryScopeListed = IsTrue<[Unlisted] extends [never] ? true : false>;

/** Held only by an unrestricted key or a session: a key with `tenants` or `scopes` never manages keys. */
export const UNRESTRICTED_ONLY: Scope = 'account:manage';

/** Refused together with `tenants` (what the key created would be outside its reach). */
export const NOT_WITH_TENANTS: Scope = 'tenants:create';

export interface ScopeChoice {
  scope: Scope;
  /** The operations (client method names) that need it. */
  operations: string[];
}

export interface ScopeGroup {
  /** `works` of `works:read`. */
  resource: string;
  /** `Works`. */
  label: string;
  choices: ScopeChoice[];
}

const operationsBy = new Map<Scope, string[]>();
for (const [operation, scope] of Object.entries<Scope>(requiredScopes)) {
  operationsBy.set(scope, [...(operationsBy.get(scope) ?? []), operation]);
}

export const scopeGroups: ScopeGroup[] = [];
for (const scope of scopes) {
  if (scope === UNRESTRICTED_ONLY) continue;
  const resource = scope.split(':')[0]!;
  let group = scopeGroups.find((candidate) => candidate.resource === resource);
  if (!group) {
    group = { resource, label: resource.charAt(0).toUpperCase() + resource.slice(1), choices: [] };
    scopeGroups.push(group);
  }
  group.choices.push({ scope, operations: operationsBy.get(scope) ?? [] });
}

/** `picked` in the contract's order (so one choice is one body, whatever order the boxes were ticked in). */
export const inContractOrder = (picked: readonly Scope[]): Scope[] => scopes.filter((scope) => picked.includes(scope));
