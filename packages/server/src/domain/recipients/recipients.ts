import type { Db } from '@works-api/prisma';
import { findOpenAnswerLink, findRequestForRecipient } from '@works-api/prisma';
import { notFound, ProblemError } from '../errors';
import { DEFAULT_LIMITS } from '../limits';
import { applyAction, type RequestRef } from '../requests/requests';
import type { Schemas } from '../schemas';
import { presentUserRecord } from '../users/present';
import { answerTokenMatches, hashAnswerToken, isAnswerToken } from './tokens';

/**
 * The recipient's side of a request, reached with the token of an emailed link instead of an API key. A link
 * opens its request while it is of the request's current link generation (a resend revokes the older ones) and
 * the request is not cancelled (a cancel revokes them all): anything else is the same 404 as an unknown token.
 */
const linkGone = () => notFound('request for this link: it may have been replaced by a newer email, or cancelled');

/**
 * A link older than ANSWER_LINK_TTL: the same 404 to the API (an expired credential opens nothing), told apart so
 * that the page can say the link expired and how to get a new one.
 */
export class LinkExpired extends ProblemError {
  constructor() {
    super('not_found', 'This link has expired: ask the sender of the request to send it again, for a new link.');
  }
}

/** What a link opens: its request, and whether the dev mailbox kept it (members could read it). */
type ResolvedLink = RequestRef & { devMailbox: boolean };

/**
 * The request a token opens, or 404: one index read by the token's hash, confirmed in constant time; a link older
 * than `ttlMs` (ANSWER_LINK_TTL) is expired.
 */
async function resolveLink(db: Db, token: string, ttlMs: number): Promise<ResolvedLink> {
  if (!isAnswerToken(token)) throw linkGone();
  const link = await findOpenAnswerLink(db, hashAnswerToken(token));
  if (!link || !answerTokenMatches(token, link.tokenHash)) throw linkGone();
  if (new Date(link.createdAt).getTime() + ttlMs <= Date.now()) throw new LinkExpired();
  return { tenantId: link.tenantId, workId: link.workId, requestId: link.requestId, devMailbox: link.devMailbox };
}

/** What the page shows: the request as its recipient sees it, and nothing else of the tenant. */
async function recipientView(db: Db, ref: RequestRef): Promise<Schemas['RecipientRequest']> {
  const request = await findRequestForRecipient(db, ref.requestId);
  if (!request) throw linkGone();
  return {
    status: request.status,
    workName: request.work.name,
    title: request.title,
    message: request.message,
    dueAt: request.dueAt?.toISOString() ?? null,
    sender: presentUserRecord(request.owner),
    recipient: {
      email: request.recipientEmail,
      firstName: request.recipientFirstName,
      lastName: request.recipientLastName,
    },
    answer: request.answer,
    createdAt: request.createdAt.toISOString(),
    confirmedAt: request.confirmedAt?.toISOString() ?? null,
  };
}

export async function getRecipientRequest(
  db: Db,
  token: string,
  ttlMs: number = DEFAULT_LIMITS.answerLinkTtlMs,
): Promise<Schemas['RecipientRequest']> {
  return recipientView(db, await resolveLink(db, token, ttlMs));
}

/**
 * The recipient answers: the `confirm` action with their answer, applied by the same code as a member's (one
 * statement: the transition, its event with the recipient as actor, the `request.confirmed` webhook). Only a
 * pending request takes an answer: a second answer is a 409, not a silent repeat, so the first one stands. Through
 * a link the dev mailbox kept, which the tenant's members could read, the answer is marked so (the event's
 * `throughDevMailbox`, the request's `confirmedThroughDevMailbox`): it is not recorded as the recipient's word.
 */
export async function answerRecipientRequest(
  db: Db,
  token: string,
  answer: string,
  ttlMs: number = DEFAULT_LIMITS.answerLinkTtlMs,
): Promise<Schemas['RecipientRequest']> {
  const ref = await resolveLink(db, token, ttlMs);
  await applyAction(db, {
    ref,
    action: 'confirm',
    by: { type: 'recipient', throughDevMailbox: ref.devMailbox },
    note: answer,
    repeatIsConflict: true,
  });
  return recipientView(db, ref);
}
