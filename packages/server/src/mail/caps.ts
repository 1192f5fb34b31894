import { ProblemError } from '../domain/errors';
import type { Limits } from '../domain/limits';

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

/** The UTC day an email counts in (statements/mail.ts). */
export { utcDay } from '@works-api/prisma';

/** Seconds from `now` until the next UTC day, when the daily caps start over (at least 1). */
export function secondsUntilNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

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
