import { type MailAllowanceFor, mailAllowanceParams, mailDay } from '@works-api/prisma';
import { ProblemError } from '../domain/errors';
import type { Limits } from '../domain/limits';

/**
 * The daily email caps, counted per UTC day by the database function `take_mail_allowance` (migration
 * `mail_caps_across_tenants`; the call and its parameters are the database package's, statements/mail-recipients.ts)
 * inside the very statement that queues an email, so that a refused email leaves nothing behind: no request, no
 * invitation, no count. Addresses count in their canonical form (lower case, no `+tag`, Gmail's dots dropped). The
 * function raises one of these SQLSTATEs over a cap; each is a 429 with a code of its own (which cap) and
 * `Retry-After` until the next UTC day.
 */
const REFUSALS = {
  WA001: 'recipient_email_limit_reached',
  WA002: 'tenant_email_budget_exhausted',
  WA003: 'address_email_limit_reached',
  WA004: 'sender_email_budget_exhausted',
} as const;

/**
 * Why an email was not sent, as its request shows it, when the address stopped the tenant's emails, or every email
 * of the service (the tenant is told only that its own emails are stopped: nothing about other tenants).
 */
export const EMAILS_STOPPED = 'The recipient has stopped emails from this tenant.';

export type MailCaps = Pick<
  Limits,
  'emailsPerRecipientPerDay' | 'emailsPerTenantPerDay' | 'emailsPerAddressPerDay' | 'emailsPerSenderPerDay'
>;

/** The UTC day an email counts in, as the `date` the function takes. */
export const utcDay = mailDay;

/** Seconds from `now` until the next UTC day, when the daily caps start over (at least 1). */
export function secondsUntilNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/**
 * The values of the call taking one email's place under every cap (the database package's `MAIL_ALLOWANCE_CALL`,
 * which a queuing statement embeds), for a tenant's email caused by `senderId` (who sent, resent or invited).
 */
export const allowanceParams = (tenantId: string, senderId: string, email: string, caps: MailCaps, now: Date) =>
  mailAllowanceParams({ kind: 'tenant', tenantId, senderId, email } satisfies MailAllowanceFor, caps, now);

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
  const code = REFUSALS[state];
  return new ProblemError(code, REFUSAL_DETAILS[code](caps), {}, secondsUntilNextUtcDay(now));
}

/** What each refusal says, in words: which cap, and its figure. */
const REFUSAL_DETAILS: Record<(typeof REFUSALS)[keyof typeof REFUSALS], (caps: MailCaps) => string> = {
  recipient_email_limit_reached: (caps) =>
    `This tenant has sent ${caps.emailsPerRecipientPerDay} emails to this address today, the most allowed; retry after Retry-After.`,
  tenant_email_budget_exhausted: (caps) =>
    `This tenant has sent ${caps.emailsPerTenantPerDay} emails today, the most allowed; retry after Retry-After.`,
  address_email_limit_reached: (caps) =>
    `This address has been sent ${caps.emailsPerAddressPerDay} emails by this service today (from every tenant, in any of its forms), the most allowed; retry after Retry-After.`,
  sender_email_budget_exhausted: (caps) =>
    `You have caused ${caps.emailsPerSenderPerDay} emails today (in all your tenants), the most allowed; retry after Retry-After.`,
};
