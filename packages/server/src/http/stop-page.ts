import express, { type RequestHandler, Router } from 'express';
import type { Db } from '@works-api/prisma';
import { ProblemError } from '../domain/errors';
import { type EmailsFromTenant, emailsFromTenant, setEmailsStopped } from '../mail/stop-emails';
import { escapeHtml as e } from '../mail/render';
import { page, send } from './recipient-page';

/**
 * `/stop/<token>`: the link every email carries, to stop one tenant's emails to one address, with no account. A GET
 * only shows what the link does and asks (mail scanners open links; they must not stop anything); a POST stops
 * them, as does the one-click `List-Unsubscribe-Post` of mail clients (RFC 8058), and the same page then offers to
 * turn them back on (`action=resume`). Behind the recipient rate limits, like the answer page.
 */
const FOOTER = 'This page is about your address only. Do not share its address.';

function statePage(state: EmailsFromTenant, done?: 'stopped' | 'resumed'): string {
  const tenant = `"${state.tenantName}"`;
  const status = state.stopped
    ? `${done === 'stopped' ? 'Done. ' : ''}${tenant} sends no more emails to ${state.email}. Its requests to you still exist, but you are not emailed about them.`
    : done === 'resumed'
      ? `Done. ${tenant} may email ${state.email} again.`
      : '';
  const parts = [
    `<div class="card">`,
    `<h1>Emails from ${e(tenant)}</h1>`,
    status ? `<p class="status" role="status">${e(status)}</p>` : '',
    state.stopped
      ? `<form method="post"><input type="hidden" name="action" value="resume"><button type="submit">Receive emails from ${e(tenant)} again</button></form>`
      : `<p>Stop every email from ${e(tenant)} on works-api to ${e(state.email)}: requests, reminders and invitations.</p>
<form method="post"><input type="hidden" name="action" value="stop"><button type="submit">Stop emails from ${e(tenant)}</button></form>`,
    `</div>`,
  ];
  return page(`Emails from ${state.tenantName}`, parts.join('\n'), FOOTER);
}

const unknownPage = () =>
  page(
    'This link does not work',
    `<div class="card"><h1>This link does not work</h1>
<p>It is not a link from one of our emails, or it was cut short. Open the link at the end of the email again.</p></div>`,
    FOOTER,
  );

const tokenOf = (req: express.Request): string => String(req.params.token ?? '');
const isUnknown = (error: unknown) => error instanceof ProblemError && error.code === 'not_found';

export function stopPageRoutes(db: Db, limits: RequestHandler[]): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '1kb', parameterLimit: 5 });
  router.get('/stop/:token', ...limits, async (req, res) => {
    try {
      send(res, 200, statePage(await emailsFromTenant(db, tokenOf(req))));
    } catch (error) {
      if (!isUnknown(error)) throw error;
      send(res, 404, unknownPage());
    }
  });
  router.post('/stop/:token', ...limits, form, async (req, res) => {
    // Anything but an explicit resume stops: the form's `action=stop`, a mail client's `List-Unsubscribe=One-Click`.
    const resume = (req.body as Record<string, unknown> | undefined)?.action === 'resume';
    try {
      send(res, 200, statePage(await setEmailsStopped(db, tokenOf(req), !resume), resume ? 'resumed' : 'stopped'));
    } catch (error) {
      if (!isUnknown(error)) throw error;
      send(res, 404, unknownPage());
    }
  });
  return router;
}
