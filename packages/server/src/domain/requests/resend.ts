import type { Db } from '@works-api/prisma';
import { newId, resendRequestEmail } from '@works-api/prisma';
import type { Actor } from '../access';
import { ProblemError } from '../errors';
import type { Schemas } from '../schemas';
import { workDiscarded } from '../works/works';
import { DEFAULT_LIMITS, type Limits } from '../limits';
import { allowanceParams, type MailCaps, mailCapRefusal } from '../../mail/caps';
import { allowedActions } from './state-machine';
import { presentRequest, type RequestRef } from './present';
import { findRequestAs, type FoundRequest } from './read';

/**
 * Emails a pending request's recipient again, with a new link: the request's link generation goes up, which
 * revokes every earlier link at once; emails still queued for it are dropped, and one new email is queued, all in
 * one statement, which also takes the email's place under the daily caps (over one it aborts: 429, nothing
 * changed). At most one resend per `resendCooldownMs` (429 `resend_too_soon`) and `resendsPerRequest` in all
 * (409 `resend_limit_reached`), checked in that statement's WHERE, so concurrent resends cannot pass them. To an
 * address that stopped the tenant's emails nothing is sent and nothing else changes: the request says so. Not a
 * transition: the status, `updatedAt` and the ETag stay as they are.
 */
export async function resendRequest(
  db: Db,
  actor: Actor,
  ref: RequestRef,
  limits: MailCaps & Pick<Limits, 'resendCooldownMs' | 'resendsPerRequest'> = DEFAULT_LIMITS,
): Promise<Schemas['Request']> {
  const current = await findRequestAs(db, actor, 'actOnRequest', ref);
  const now = new Date();
  checkResendable(current, limits, now);
  let resent: Array<{ stopped: boolean; queued: number }>;
  try {
    resent = await resendRequestEmail(
      db,
      {
        requestId: ref.requestId,
        workId: ref.workId,
        mailId: newId(),
        now: now.toISOString(),
        tenantId: ref.tenantId,
        resendsPerRequest: limits.resendsPerRequest,
        cooldown: `${limits.resendCooldownMs / 1000} seconds`,
      },
      // The resender causes this email: it counts against their budget, not the request's creator's.
      allowanceParams(ref.tenantId, actor.userId, current.recipientEmail, limits, now),
    );
  } catch (error) {
    throw mailCapRefusal(error, limits, now) ?? error;
  }
  // Changed in between (answered, cancelled, discarded, resent): answer from what it is now.
  if (resent.length === 0) return resendRequest(db, actor, ref, limits);
  if (resent[0]!.stopped) return presentRequest({ ...current, emailsStopped: true });
  db.outbox.mail.signal();
  return presentRequest({
    ...current,
    emailStatus: 'queued',
    emailFailure: null,
    emailsStopped: false,
    resendCount: current.resendCount + 1,
    lastResentAt: now,
  });
}

/** Why a request cannot be resent now, if it cannot: its state, its work, or the resend limits. */
function checkResendable(
  current: FoundRequest,
  limits: Pick<Limits, 'resendCooldownMs' | 'resendsPerRequest'>,
  now: Date,
): void {
  if (current.work.discardedAt) throw workDiscarded();
  if (current.status !== 'pending') {
    throw new ProblemError('invalid_transition', `A ${current.status} request cannot be resent.`, {
      currentStatus: current.status,
      allowedActions: allowedActions(current.status),
    });
  }
  if (current.resendCount >= limits.resendsPerRequest) {
    throw new ProblemError(
      'resend_limit_reached',
      `This request was resent ${limits.resendsPerRequest} times, the most allowed.`,
    );
  }
  const waitMs = (current.lastResentAt?.getTime() ?? -Infinity) + limits.resendCooldownMs - now.getTime();
  if (waitMs > 0) {
    throw new ProblemError(
      'resend_too_soon',
      `This request was resent less than ${describeDuration(limits.resendCooldownMs)} ago; retry after Retry-After.`,
      {},
      Math.ceil(waitMs / 1000),
    );
  }
}

/** `10 minutes`, `90 seconds`, `1 hour`: a cooldown in words. */
function describeDuration(ms: number): string {
  const [amount, unit] =
    ms % 3_600_000 === 0
      ? [ms / 3_600_000, 'hour']
      : ms % 60_000 === 0
        ? [ms / 60_000, 'minute']
        : [ms / 1000, 'second'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}
