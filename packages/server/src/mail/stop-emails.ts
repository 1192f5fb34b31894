import type { Db } from '@works-api/prisma';
import {
  findStopLinkState,
  secretBoxOf,
  setServiceEmailsStopped,
  setTenantEmailsStopped,
  type StopLinkState,
} from '@works-api/prisma';
import { notFound } from '../domain/errors';
import { recipientOfStopLink } from '../domain/recipients/stop-links';

/**
 * A recipient stops (or resumes) emails to their address, through the link every email carries, with no account:
 * the emails of the tenant the email came from, or every email of the service (from every tenant). Both act on the
 * address's canonical form (lower case, no `+tag`, Gmail's dots dropped), so a sender cannot get round a stop with
 * a variant of the address. Stopped, requests to the address are still created but not emailed (and say so),
 * reminders and resends are not sent, and invitations come without an email; the mail sender also drops what was
 * already queued. A service-wide stop leaves the sign-in links the address asks for itself: they are how its
 * person gets back into their account, and carry no text anyone else chose.
 */
export type EmailsFromTenant = StopLinkState;

/** What a stop link may do: stop or resume the tenant's emails, or every email of the service. */
export type StopAction = 'stop' | 'resume' | 'stop_all' | 'resume_all';

const linkUnknown = () => notFound('address for this link');

/** The row a token names; a link we did not make is a 404, decided without a lookup. */
function recipientOf(db: Db, token: string): string {
  const id = recipientOfStopLink(secretBoxOf(db), token);
  if (id === null) throw linkUnknown();
  return id;
}

/** What a stop link is about. */
export async function emailsFromTenant(db: Db, token: string): Promise<EmailsFromTenant> {
  const state = await findStopLinkState(db, recipientOf(db, token));
  if (!state) throw linkUnknown();
  return state;
}

/** Does `action` to the address's emails, then reads what it is now; doing it twice changes nothing. */
export async function setEmailsStopped(db: Db, token: string, action: StopAction): Promise<EmailsFromTenant> {
  const id = recipientOf(db, token);
  const done =
    action === 'stop' || action === 'resume'
      ? await setTenantEmailsStopped(db, id, action === 'stop')
      : await setServiceEmailsStopped(db, id, action === 'stop_all');
  if (!done) throw linkUnknown();
  return emailsFromTenant(db, token);
}
