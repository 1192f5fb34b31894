import type { Db } from '../handle';
import type { AnswerLink, Request, Work } from '../generated/client';
import { userRecord } from './users';
import { sendStatement } from './send';

/**
 * The recipient's side of a request, reached with the token of an emailed link: the link by its token's hash, and
 * the request as its recipient sees it.
 */

/** A link with what it opens. */
export type AnswerLinkRow = Pick<AnswerLink, 'tokenHash' | 'requestId' | 'devMailbox' | 'createdAt'> &
  Pick<Request, 'workId'> &
  Pick<Work, 'tenantId'>;

/**
 * The link of a token's hash while it opens its request: of the request's current link generation, and the request
 * not cancelled. One index read by the hash.
 */
const FIND_OPEN_ANSWER_LINK = `SELECT l.token_hash AS "tokenHash", l.dev_mailbox AS "devMailbox", l.created_at AS "createdAt",
            r.id AS "requestId", r.work_id AS "workId", w.tenant_id AS "tenantId"
     FROM answer_links l JOIN requests r ON r.id = l.request_id JOIN works w ON w.id = r.work_id
     WHERE l.token_hash = :tokenHash AND l.generation = r.link_generation AND r.status <> 'cancelled'`;

export async function findOpenAnswerLink(db: Db, tokenHash: string): Promise<AnswerLinkRow | undefined> {
  const [link] = await sendStatement<AnswerLinkRow>(db, FIND_OPEN_ANSWER_LINK, { tokenHash });
  return link;
}

/** A request with its work's name and its owner's record: what the recipient's page shows. */
export function findRequestForRecipient(db: Db, requestId: string) {
  return db.prisma.request.findUnique({
    where: { id: requestId },
    include: {
      work: { select: { name: true } },
      owner: userRecord,
    },
  });
}
