import { newId } from '@works-api/prisma';
import { ProblemError } from './errors';
import type { Limits } from './limits';

/**
 * The daily email caps of a tenant: per address (MAX_EMAILS_PER_RECIPIENT_PER_DAY) and in all
 * (MAX_EMAILS_PER_TENANT_PER_DAY), counted per UTC day by the database function `take_mail_allowance` (migration
 * `email_caps`) inside the very statement that queues an email, so that a refused email leaves nothing behind: no
 * request, no invitation, no count. The function raises one of these SQLSTATEs over a cap.
 */
const REFUSALS = {
  WA001: 'recipient_email_limit_reached',
  WA002: 'tenant_email_budget_exhausted',
} as const;

/** Why an email was not sent, as its request shows it, when the address stopped the tenant's emails. */
export const EMAILS_STOPPED = 'The recipient has stopped emails from this tenant.';

export type MailCaps = Pick<Limits, 'emailsPerRecipientPerDay' | 'emailsPerTenantPerDay'>;

/** The UTC day an email counts in, as the `date` the function takes. */
export const utcDay = (now: Date): string => now.toISOString().slice(0, 10);

/** Seconds from `now` until the next UTC day, when the daily caps start over (at least 1). */
export function secondsUntilNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/**
 * The SQL call taking one email's place (tenant, address, day, a new recipient id, the two caps), with named
 * parameters (`sendStatement`): `true` when the address stopped the tenant's emails (nothing counted, nothing to
 * send), `false` once counted. `allowanceParams` gives its values.
 */
export const ALLOWANCE_CALL =
  'take_mail_allowance(:allowanceTenantId::uuid, :allowanceEmail::text, :allowanceDay::date, :allowanceRecipientId::uuid, ' +
  ':emailsPerRecipientPerDay::int, :emailsPerTenantPerDay::int)';
export const allowanceParams = (tenantId: string, email: string, caps: MailCaps, now: Date) => ({
  allowanceTenantId: tenantId,
  allowanceEmail: email,
  allowanceDay: utcDay(now),
  allowanceRecipientId: newId(),
  emailsPerRecipientPerDay: caps.emailsPerRecipientPerDay,
  emailsPerTenantPerDay: caps.emailsPerTenantPerDay,
});

/**
 * The refusal's SQLSTATE of a database error, wherever the driver or Prisma put it: the driver's error (a plain
 * statement), its `cause`, or Prisma's `meta.driverAdapterError` (a raw query in a transaction).
 */
function refusalOf(error: unknown, depth = 0): keyof typeof REFUSALS | undefined {
  if (typeof error !== 'object' || error === null || depth > 5) return undefined;
  const { code, originalCode, cause, meta } = error as {
    code?: unknown;
    originalCode?: unknown;
    cause?: unknown;
    meta?: { driverAdapterError?: unknown };
  };
  for (const candidate of [code, originalCode])
    if (typeof candidate === 'string' && Object.hasOwn(REFUSALS, candidate)) return candidate as keyof typeof REFUSALS;
  return refusalOf(cause, depth + 1) ?? refusalOf(meta?.driverAdapterError, depth + 1);
}

/**
 * The 429 for a statement `take_mail_allowance` refused (with `Retry-After` until the caps start over), or undefined
 * for any other error.
 */
export function mailCapRefusal(error: unknown, caps: MailCaps, now = new Date()): ProblemError | undefined {
  const state = refusalOf(error);
  if (state === undefined) return undefined;
  const retryAfter = secondsUntilNextUtcDay(now);
  return REFUSALS[state] === 'recipient_email_limit_reached'
    ? new ProblemError(
        'recipient_email_limit_reached',
        `This tenant has sent ${caps.emailsPerRecipientPerDay} emails to this address today, the most allowed; retry after Retry-After.`,
        {},
        retryAfter,
      )
    : new ProblemError(
        'tenant_email_budget_exhausted',
        `This tenant has sent ${caps.emailsPerTenantPerDay} emails today, the most allowed; retry after Retry-After.`,
        {},
        retryAfter,
      );
}
