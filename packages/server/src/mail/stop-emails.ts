import type { Db } from '@works-api/prisma';
import { findEmailsFromTenant, setEmailsStopped as writeEmailsStopped } from '@works-api/prisma';
import { secretBoxOf } from '@works-api/prisma';
import { notFound } from '../domain/errors';
import { recipientOfStopLink } from '../domain/recipients/stop-links';

/**
 * A recipient stops (or resumes) the emails of one tenant to their address, through the link every email carries,
 * with no account. Stopped, the tenant's requests to the address are still created but not emailed (and say so),
 * reminders and resends are not sent, and invitations come without an email; the mail sender also drops what was
 * already queued.
 */
export interface EmailsFromTenant {
  tenantName: string;
  email: string;
  stopped: boolean;
}

const linkUnknown = () => notFound('address for this link');

/** What a stop link is about; a link we did not make is a 404, decided without a lookup. */
export async function emailsFromTenant(db: Db, token: string): Promise<EmailsFromTenant> {
  const id = recipientOfStopLink(secretBoxOf(db), token);
  if (id === null) throw linkUnknown();
  const row = await findEmailsFromTenant(db, { recipientId: id });
  if (!row) throw linkUnknown();
  return row;
}

/** Stops (`true`) or resumes (`false`) the tenant's emails to the address; doing it twice changes nothing. */
export async function setEmailsStopped(db: Db, token: string, stopped: boolean): Promise<EmailsFromTenant> {
  const id = recipientOfStopLink(secretBoxOf(db), token);
  if (id === null) throw linkUnknown();
  const row = await writeEmailsStopped(db, { recipientId: id, stopped });
  if (!row) throw linkUnknown();
  return row;
}
