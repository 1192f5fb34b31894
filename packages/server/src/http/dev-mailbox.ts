import { type RequestHandler, Router } from 'express';
import type { Db } from '@works-api/prisma';
import { memberRolesAmong } from '@works-api/prisma';
import { holdsScope, isRestricted, reachesTenant, type Role, roleAtLeast } from '../domain/access';
import type { DevMail, DevMailbox } from '../mail/transport';

/**
 * GET /dev/mailbox: the emails the dev mailbox kept (only when it is on; otherwise the route does not exist, a 404,
 * which is how the console knows whether to show its Mailbox), newest first.
 *
 * The mailbox holds live answer links, and an answer given through one is not the recipient's: so each caller sees
 * as little as they need. An owner or admin of a tenant sees the emails of its requests; a member below admin only
 * those of the requests they sent themselves (they could confirm those anyway); anyone sees the emails addressed to
 * them. Nothing else: not another tenant's, not a colleague's.
 */
export function devMailboxRoutes(mailbox: DevMailbox, db: Db, apiKeyAuth: RequestHandler): Router {
  const router = Router({ caseSensitive: true });
  router.get('/dev/mailbox', apiKeyAuth, async (req, res) => {
    const actor = req.actor!;
    const messages = mailbox.messages();
    const tenantIds = [...new Set(messages.flatMap((mail) => (mail.request ? [mail.request.tenantId] : [])))];
    const roles = new Map<string, Role>(
      tenantIds.length === 0
        ? []
        : (await memberRolesAmong(db, actor.userId, tenantIds)).map((membership) => [
            membership.tenantId,
            membership.role,
          ]),
    );
    const me = actor.user.email.toLowerCase();
    // A restricted key sees only the emails of requests in its tenants, and only with requests:read; the emails
    // addressed to its user (invitations, sign-in links) are for an unrestricted credential.
    const restricted = isRestricted(actor);
    const visible = (mail: DevMail) => {
      if (mail.to.toLowerCase() === me && !restricted) return true;
      if (mail.request === null) return false;
      if (!reachesTenant(actor, mail.request.tenantId) || !holdsScope(actor, 'requests:read')) return false;
      const role = roles.get(mail.request.tenantId);
      return role !== undefined && (roleAtLeast(role, 'admin') || mail.request.ownerId === actor.userId);
    };
    res.set('Cache-Control', 'no-store').json({ messages: messages.filter(visible) });
  });
  return router;
}
