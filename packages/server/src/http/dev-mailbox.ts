import { type RequestHandler, Router } from 'express';
import type { Db } from '../db/client';
import type { DevMail, DevMailbox } from '../mail/transport';

/**
 * GET /dev/mailbox: the emails the dev mailbox kept (only when SMTP_URL is not set; with SMTP configured the route
 * does not exist, a 404, which is how the console knows whether to show its Mailbox), newest first.
 *
 * Each caller sees only the emails of requests in tenants they are a member of, and any email addressed to their
 * own address. Without SMTP several people may still share one server (a team's staging box): the mailbox holds
 * live answer links, and one tenant's must not reach another's members. A member may already confirm their
 * tenant's requests themselves, so seeing those links gives them nothing more.
 */
export function devMailboxRoutes(mailbox: DevMailbox, db: Db, apiKeyAuth: RequestHandler): Router {
  const router = Router({ caseSensitive: true });
  router.get('/dev/mailbox', apiKeyAuth, async (req, res) => {
    const actor = req.actor!;
    const messages = mailbox.messages();
    const tenantIds = [...new Set(messages.flatMap((mail) => (mail.request ? [mail.request.tenantId] : [])))];
    const mine = new Set(
      tenantIds.length === 0
        ? []
        : (
            await db.membership.findMany({
              where: { userId: actor.userId, tenantId: { in: tenantIds } },
              select: { tenantId: true },
            })
          ).map((membership) => membership.tenantId),
    );
    const me = actor.user.email.toLowerCase();
    const visible = (mail: DevMail) =>
      (mail.request !== null && mine.has(mail.request.tenantId)) || mail.to.toLowerCase() === me;
    res.set('Cache-Control', 'no-store').json({ messages: messages.filter(visible) });
  });
  return router;
}
