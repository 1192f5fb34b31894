import { type RequestHandler, Router } from 'express';
import type { DevMailbox } from '../mail/transport';

/**
 * GET /dev/mailbox: the emails the dev mailbox kept (only when SMTP_URL is not set), newest first, for the README
 * walk-through (a console page for it is still to come). Any valid API key may read it: it is for a developer's
 * own machine, where every email is theirs; with SMTP configured the route does not exist.
 */
export function devMailboxRoutes(mailbox: DevMailbox, apiKeyAuth: RequestHandler): Router {
  const router = Router();
  router.get('/dev/mailbox', apiKeyAuth, (_req, res) => {
    res.set('Cache-Control', 'no-store').json({ messages: mailbox.messages() });
  });
  return router;
}
