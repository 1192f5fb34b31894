import type { Db, Transaction } from '@works-api/prisma';
import { type CappedResource, inTransaction, lockOwnerAndCount } from '@works-api/prisma';
import { ProblemError } from './errors';

/**
 * How much one user or tenant may hold, so that none of them can make the service slow for the others:
 * configurable (MAX_API_KEYS_PER_USER, MAX_TENANTS_PER_USER, MAX_WEBHOOK_ENDPOINTS_PER_TENANT,
 * MAX_INVITATIONS_PER_TENANT), each refusal a 409 with its own problem code.
 */
export interface Limits {
  /** Active (not revoked) API keys per user: revoking one frees a place. */
  apiKeysPerUser: number;
  /** Tenants a user owns (created); tenants they were added to as a member do not count. */
  tenantsPerUser: number;
  /** Webhook endpoints per tenant, enabled or not. */
  webhookEndpointsPerTenant: number;
  /** Pending invitations per tenant (each one an email sent to an address the tenant chose). */
  invitationsPerTenant: number;
  /** How long an invitation can be accepted (INVITATION_TTL). */
  invitationTtlMs: number;
  /** How long after a resend the next one is refused (RESEND_COOLDOWN). */
  resendCooldownMs: number;
  /** Resends of one request in all (MAX_RESENDS_PER_REQUEST). */
  resendsPerRequest: number;
  /** Emails a tenant may send to one address per UTC day (MAX_EMAILS_PER_RECIPIENT_PER_DAY). */
  emailsPerRecipientPerDay: number;
  /** Emails a tenant may send per UTC day, to every address together (MAX_EMAILS_PER_TENANT_PER_DAY). */
  emailsPerTenantPerDay: number;
  /** Emails the whole service may send to one (canonical) address per UTC day (MAX_EMAILS_PER_ADDRESS_PER_DAY). */
  emailsPerAddressPerDay: number;
  /** Emails one user may cause per UTC day, in all their tenants together (MAX_EMAILS_PER_SENDER_PER_DAY). */
  emailsPerSenderPerDay: number;
  /** How long an emailed answer link works (ANSWER_LINK_TTL). */
  answerLinkTtlMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  apiKeysPerUser: 100,
  tenantsPerUser: 100,
  webhookEndpointsPerTenant: 20,
  invitationsPerTenant: 100,
  // Two weeks: long enough to cover a holiday, short enough that a forgotten invitation does not wait for ever.
  invitationTtlMs: 14 * 86_400_000,
  // A resend is for an email that went missing: one every 10 minutes, 5 in all, is plenty for that and no bombing.
  resendCooldownMs: 10 * 60_000,
  resendsPerRequest: 5,
  // A busy tenant sends a few requests a day to one person; 20 leaves room, and caps what a loop can do to them.
  emailsPerRecipientPerDay: 20,
  // What a team sends in a day, with room; a bigger customer gets a raise rather than everyone.
  emailsPerTenantPerDay: 1000,
  // Every tenant together, and the sign-in links: a person who deals with many senders gets a few dozen emails a
  // day from us at most, while one account's loop through variants of an address or many tenants stops at 50.
  emailsPerAddressPerDay: 50,
  // One user sends as much as one tenant may, however many tenants they own or belong to: more tenants buy no more
  // email. A user who really sends for several busy tenants gets a raise.
  emailsPerSenderPerDay: 1000,
  // 30 days: a recipient may answer at the end of a monthly cycle or after a holiday, while a link left in an old
  // mailbox (archived, forwarded, a mailbox someone else gets into) stops working within a month. A long request
  // never depends on an old link: the reminder before its due date and every resend bring a new one.
  answerLinkTtlMs: 30 * 86_400_000,
};

export const apiKeyLimitReached = (cap: number) =>
  new ProblemError(
    'api_key_limit_reached',
    `You already have ${cap} active API keys, the most allowed; revoke one first.`,
  );

export const tenantLimitReached = (cap: number) =>
  new ProblemError('tenant_limit_reached', `You already own ${cap} tenants, the most allowed.`);

export const webhookEndpointLimitReached = (cap: number) =>
  new ProblemError(
    'webhook_endpoint_limit_reached',
    `This tenant already has ${cap} webhook endpoints, the most allowed; delete one first.`,
  );

export const invitationLimitReached = (cap: number) =>
  new ProblemError(
    'invitation_limit_reached',
    `This tenant already has ${cap} pending invitations, the most allowed; delete one first.`,
  );

export interface CapCheck {
  /** What counts (a user's active API keys, a tenant's webhook endpoints). */
  counted: CappedResource;
  /** Its owner (user or tenant), whose row the transaction locks: two creations cannot both take the last place. */
  ownerId: string;
  cap: number;
  refusal: (cap: number) => ProblemError;
}

/**
 * Concurrent creations by one owner queue on its row, one short transaction after the other: give them longer
 * than Prisma's defaults (2 s to start, 5 s to finish) before a busy moment turns into 503s. The pool's statement
 * timeout still bounds each statement.
 */
const CAPPED_TRANSACTION = { maxWait: 10_000, timeout: 15_000 };

/**
 * Runs `create` in a transaction that first locks the owner's row (`FOR NO KEY UPDATE`: inserts that reference
 * it still go through), then counts what the owner has, reading at most `cap` rows whatever they have, and
 * refuses once they have `cap`. The count runs after the lock, in a statement of its own, so it sees every
 * creation committed before it: of concurrent creations, exactly as many succeed as there are places left.
 */
export async function createWithinCap<T>(
  db: Db,
  { counted, ownerId, cap, refusal }: CapCheck,
  create: (tx: Transaction) => Promise<T>,
): Promise<T> {
  return inTransaction(
    db,
    async (tx) => {
      if ((await lockOwnerAndCount(tx, counted, ownerId, cap)) >= cap) throw refusal(cap);
      return create(tx);
    },
    CAPPED_TRANSACTION,
  );
}
