import type { Db } from '@works-api/prisma';
import {
  apiKeysPage,
  countApiKeysOf,
  findApiKeyForAuth,
  holdsRoleAmongTenants,
  insertApiKey,
  memberTenantsAmong,
  revokeApiKeyOf,
  touchApiKeyLastUsed,
} from '@works-api/prisma';
import type { ApiKey } from '@works-api/prisma/client';
import { isId, newId } from '@works-api/prisma';
import type { HeldKey } from '@works-api/prisma';
import { type Actor, type Role, roleAtLeast, type Scope, scopeMinimumRole } from '../access';
import { parseDateTime } from '../dates';
import { type FieldError, notFound, ProblemError } from '../errors';
import { apiKeyLimitReached, createWithinCap } from '../limits';
import { type Page, type PageRequest, readPage } from '../paging';
import type { Schemas } from '../schemas';
import { normalizeName } from '../users/present';
import { aboutField, ruleMessages } from '../validation-messages';
import { generateKey, keyMatches, prefixOf } from './secrets';
import { recordIn } from '../idempotent-results';

type KeyRow = Pick<
  ApiKey,
  'id' | 'name' | 'prefix' | 'createdAt' | 'lastUsedAt' | 'revokedAt' | 'tenantIds' | 'scopes' | 'expiresAt'
>;

/** Empty lists are stored for "not restricted" (the contract's null): the API never stores an empty restriction. */
export const presentApiKey = (key: KeyRow): Schemas['ApiKey'] => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: key.createdAt.toISOString(),
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  revokedAt: key.revokedAt?.toISOString() ?? null,
  tenants: key.tenantIds.length > 0 ? key.tenantIds : null,
  scopes: key.scopes.length > 0 ? (key.scopes as Scope[]) : null,
  expiresAt: key.expiresAt?.toISOString() ?? null,
});

/** What a new key may be limited by (the contract's CreateApiKeyBody, read). */
export interface KeyRestrictions {
  tenants?: readonly string[];
  scopes?: readonly Scope[];
  expiresAt?: Date;
}

/** Data for a new key row, and the secret to show once. */
export function newApiKey(userId: string, name: string, restrictions: KeyRestrictions = {}) {
  const { secret, prefix, secretHash } = generateKey();
  return {
    secret,
    data: {
      id: newId(),
      userId,
      name: normalizeName(name),
      prefix,
      secretHash,
      tenantIds: [...(restrictions.tenants ?? [])],
      scopes: [...(restrictions.scopes ?? [])],
      expiresAt: restrictions.expiresAt ?? null,
    },
  };
}

// Writing lastUsedAt on every request would turn every read into a write: it is kept to the minute, and written
// only when the minute read with the key differs (at most once a minute per key, a conditional UPDATE).
const MINUTE_MS = 60_000;
const startOfMinute = (time: Date): Date => new Date(Math.floor(time.getTime() / MINUTE_MS) * MINUTE_MS);

const ROLES: Role[] = ['owner', 'admin', 'member'];

/** The longest a key may live: a year, leap years included. */
export const MAX_KEY_LIFETIME_MS = 366 * 24 * 60 * 60 * 1000;

/** The caller behind a presented API key (undefined when none was presented), or 401. */
export async function authenticate(db: Db, presented: string | undefined, now = new Date()): Promise<Actor> {
  const prefix = presented === undefined ? undefined : prefixOf(presented);
  if (presented === undefined || prefix === undefined) throw unauthenticated('A valid API key is required.');
  // Every request runs this one statement (prisma/src/statements/api-keys.ts). The owner's fields come along, so
  // that what the caller creates can be answered without reading the user back, and so do the key's restrictions.
  const key = await findApiKeyForAuth(db, prefix);
  if (!key || !keyMatches(presented, key.secretHash)) throw unauthenticated('This API key is not valid.');
  if (key.revokedAt) throw unauthenticated('This API key has been revoked.');
  if (key.expiresAt && key.expiresAt <= now) {
    throw unauthenticated(`This API key expired at ${key.expiresAt.toISOString()}.`);
  }
  const minute = startOfMinute(now);
  if (!key.lastUsedAt || key.lastUsedAt < minute) await touchApiKeyLastUsed(db, key.id, minute);
  const { email, firstName, lastName } = key;
  return {
    userId: key.userId,
    user: { email, firstName, lastName },
    via: 'apiKey',
    credentialId: key.id,
    tenants: key.tenantIds.length > 0 ? new Set(key.tenantIds) : null,
    scopes: key.scopes.length > 0 ? new Set(key.scopes as Scope[]) : null,
  };
}

export const unauthenticated = (detail: string): ProblemError => new ProblemError('unauthenticated', detail);

export async function listApiKeys(db: Db, actor: Actor, request: PageRequest) {
  return readPage(request, {
    rows: (page: Page) => apiKeysPage(db, actor.userId, page),
    totalCount: () => countApiKeysOf(db, actor.userId),
    present: presentApiKey,
  });
}

/** The first ids or scopes a rule names in an error message, which the contract keeps under 1,000 characters. */
const MAX_NAMED = 10;
const listed = (names: readonly string[]): string =>
  names.length <= MAX_NAMED
    ? names.join(', ')
    : `${names.slice(0, MAX_NAMED).join(', ')} and ${names.length - MAX_NAMED} more`;

/** The body of `createApiKey`, as the contract has it. */
export type CreateApiKeyInput = Schemas['CreateApiKeyBody'];

/**
 * Reads and checks a new key's restrictions against its user as they are now: every tenant one they belong to,
 * every scope one their role allows in at least one of the key's tenants (with `tenants` omitted, in any tenant of
 * theirs; everything, when the key may create tenants, which its user then owns), `expiresAt` in the future and at
 * most a year ahead. Each broken rule is a 400 naming what is wrong.
 */
export async function readRestrictions(
  db: Db,
  actor: Actor,
  input: CreateApiKeyInput,
  now: Date,
): Promise<KeyRestrictions> {
  const errors: FieldError[] = [];
  const fail = (path: string, rule: string, names?: readonly string[]) =>
    errors.push({ path, message: `${aboutField(path, rule)}${names ? `: ${listed(names)}` : ''}` });

  let expiresAt: Date | undefined;
  if (input.expiresAt !== undefined) {
    expiresAt = parseDateTime(input.expiresAt);
    if (!expiresAt) fail('/body/expiresAt', ruleMessages.realDateTime);
    else if (expiresAt <= now) fail('/body/expiresAt', ruleMessages.future);
    else if (expiresAt.getTime() - now.getTime() > MAX_KEY_LIFETIME_MS)
      fail('/body/expiresAt', ruleMessages.withinAYear);
  }

  const tenants = input.tenants;
  if (tenants !== undefined) {
    const theirs = new Set(await memberTenantsAmong(db, actor.userId, tenants));
    const others = tenants.filter((id) => !theirs.has(id));
    if (others.length > 0) fail('/body/tenants', ruleMessages.yourTenants, others);
  }

  const scopes = input.scopes;
  if (scopes !== undefined) {
    if (scopes.includes('account:manage')) fail('/body/scopes', ruleMessages.notOnRestrictedKey);
    if (tenants !== undefined && scopes.includes('tenants:create'))
      fail('/body/scopes', ruleMessages.noTenantCreationWithTenants);
    // A key that may create tenants may be used in the tenants it makes, which its user owns.
    const createsTenants = tenants === undefined && scopes.includes('tenants:create');
    const needing = scopes.filter((scope) => scopeMinimumRole[scope] !== null);
    if (!createsTenants && needing.length > 0) {
      // One question per lowest role asked for (member, admin): does the user hold it, or more, in reach?
      const minimums = [...new Set(needing.map((scope) => scopeMinimumRole[scope]!))];
      const held = new Map<Role, boolean>();
      for (const minimum of minimums) {
        const enough = ROLES.filter((role) => roleAtLeast(role, minimum));
        held.set(minimum, await holdsRoleAmongTenants(db, actor.userId, tenants ?? null, enough));
      }
      const lacking = needing.filter((scope) => !held.get(scopeMinimumRole[scope]!));
      if (lacking.length > 0) fail('/body/scopes', ruleMessages.scopesYourRoleAllows, lacking);
    }
  }

  if (errors.length > 0) {
    const first = errors[0]!.message;
    throw new ProblemError('validation_failed', `${first[0]!.toUpperCase()}${first.slice(1)}.`, { errors });
  }
  return {
    ...(tenants !== undefined && { tenants }),
    ...(scopes !== undefined && { scopes }),
    ...(expiresAt !== undefined && { expiresAt }),
  };
}

/** A new key for the caller, while they have fewer than `maxActiveKeys` active (not revoked) keys. */
export async function createApiKey(
  db: Db,
  actor: Actor,
  input: CreateApiKeyInput,
  maxActiveKeys: number,
  heldKey?: HeldKey,
  now = new Date(),
): Promise<Schemas['CreatedApiKey']> {
  const restrictions = await readRestrictions(db, actor, input, now);
  const { secret, data } = newApiKey(actor.userId, input.name, restrictions);
  const key = await createWithinCap(
    db,
    {
      counted: 'activeApiKeys',
      ownerId: actor.userId,
      cap: maxActiveKeys,
      refusal: apiKeyLimitReached,
    },
    async (tx) => {
      const created = { ...presentApiKey(await insertApiKey(tx, data)), secret };
      await recordIn(db, tx, heldKey, created);
      return created;
    },
  );
  return key;
}

export async function revokeApiKey(db: Db, actor: Actor, apiKeyId: string, now = new Date()) {
  if (!isId(apiKeyId)) throw notFound('API key');
  // Only the first revocation sets revokedAt, so revoking twice returns the same key.
  const key = await revokeApiKeyOf(db, { id: apiKeyId, userId: actor.userId, now });
  if (!key) throw notFound('API key');
  return presentApiKey(key);
}
