import express, { type RequestHandler, Router } from 'express';
import type { Db } from '@works-api/prisma';
import { ProblemError } from '../domain/errors';
import { type EmailsFromTenant, emailsFromTenant, setEmailsStopped, type StopAction } from '../mail/stop-emails';
import { escapeHtml as e } from '../mail/render';
import { page, send } from './recipient-page';

/**
 * `/stop/<token>`: the link every email carries, to stop one tenant's emails to one address, with no account. A GET
 * only shows what the link does and asks (mail scanners open links; they must not stop anything); a POST stops
 * them, as does the one-click `List-Unsubscribe-Post` of mail clients (RFC 8058: that list, the tenant), and the
 * same page then offers to turn them back on (`action=resume`). The page also offers to stop every email of the
 * service to the address, from every tenant (`action=stop_all`, undone by `action=resume_all`). Both hold for the
 * address in any of its forms. Behind the recipient rate limits, like the answer page.
 */
const FOOTER = 'This page is about your address only. Do not share its address.';
const SERVICE = 'works-api';

type Done = 'stopped' | 'resumed' | 'stopped_all' | 'resumed_all';

const button = (action: StopAction, label: string) =>
  `<form method="post"><input type="hidden" name="action" value="${action}"><button type="submit">${e(label)}</button></form>`;

function statePage(state: EmailsFromTenant, done?: Done): string {
  const tenant = `"${state.tenantName}"`;
  const forms = `${state.email}, however it is written (capitals, a +tag after the name)`;
  const tenantStatus = state.stopped
    ? `${done === 'stopped' ? 'Done. ' : ''}${tenant} sends no more emails to ${forms}. Its requests to you still exist, but you are not emailed about them.`
    : done === 'resumed'
      ? `Done. ${tenant} may email ${state.email} again.`
      : '';
  const serviceStatus = state.stoppedEverywhere
    ? `${done === 'stopped_all' ? 'Done. ' : ''}No one on ${SERVICE} emails ${forms} any more: no requests, reminders or invitations, from any tenant. Only a sign-in link you ask for yourself still comes, so that you can always get into an account of yours.`
    : done === 'resumed_all'
      ? `Done. Tenants on ${SERVICE} may email ${state.email} again${state.stopped ? `, except ${tenant}, which you stopped on its own` : ''}.`
      : '';
  const parts = [
    `<div class="card">`,
    `<h1>Emails from ${e(tenant)}</h1>`,
    tenantStatus ? `<p class="status" role="status">${e(tenantStatus)}</p>` : '',
    state.stopped
      ? button('resume', `Receive emails from ${tenant} again`)
      : `<p>Stop every email from ${e(tenant)} on ${SERVICE} to ${e(state.email)}: requests, reminders and invitations.</p>
${button('stop', `Stop emails from ${tenant}`)}`,
    `</div>`,
    `<div class="card">`,
    `<h2>Every email from ${SERVICE}</h2>`,
    serviceStatus ? `<p class="status" role="status">${e(serviceStatus)}</p>` : '',
    state.stoppedEverywhere
      ? button('resume_all', `Receive emails from ${SERVICE} again`)
      : `<p>Or stop every email ${SERVICE} sends to ${e(state.email)}, from every tenant, now and later: requests, reminders and invitations. Sign-in links you ask for yourself still come, so that you can always get into an account of yours.</p>
${button('stop_all', `Stop every email from ${SERVICE}`)}`,
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

const ACTIONS: Record<string, StopAction> = {
  stop: 'stop',
  resume: 'resume',
  stop_all: 'stop_all',
  resume_all: 'resume_all',
};
const DONE: Record<StopAction, Done> = {
  stop: 'stopped',
  resume: 'resumed',
  stop_all: 'stopped_all',
  resume_all: 'resumed_all',
};

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
    // Anything but an explicit other action stops the tenant's emails: the form's `action=stop`, a mail client's
    // `List-Unsubscribe=One-Click`.
    const asked = String((req.body as Record<string, unknown> | undefined)?.action);
    const action = Object.hasOwn(ACTIONS, asked) ? ACTIONS[asked]! : 'stop';
    try {
      send(res, 200, statePage(await setEmailsStopped(db, tokenOf(req), action), DONE[action]));
    } catch (error) {
      if (!isUnknown(error)) throw error;
      send(res, 404, unknownPage());
    }
  });
  return router;
}
