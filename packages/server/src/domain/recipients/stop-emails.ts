import type { Db } from '@works-api/prisma';
import { sendStatement } from '@works-api/prisma';
import { secretBoxOf } from '@works-api/prisma';
import { notFound } from '../errors';
import { recipientOfStopLink } from './stop-links';

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
  const [row] = await sendStatement<EmailsFromTenant>(
    db,
    `SELECT t.name AS "tenantName", r.email, r.stopped_at IS NOT NULL AS stopped
     FROM mail_recipients r JOIN tenants t ON t.id = r.tenant_id WHERE r.id = :recipientId::uuid`,
    { recipientId: id },
  );
  if (!row) throw linkUnknown();
  return row;
}

/** Stops (`true`) or resumes (`false`) the tenant's emails to the address; doing it twice changes nothing. */
export async function setEmailsStopped(db: Db, token: string, stopped: boolean): Promise<EmailsFromTenant> {
  const id = recipientOfStopLink(secretBoxOf(db), token);
  if (id === null) throw linkUnknown();
  const [row] = await sendStatement<EmailsFromTenant>(
    db,
    `UPDATE mail_recipients r SET stopped_at = CASE WHEN :stopped THEN coalesce(r.stopped_at, now()) END
     FROM tenants t WHERE r.id = :recipientId::uuid AND t.id = r.tenant_id
     RETURNING t.name AS "tenantName", r.email, r.stopped_at IS NOT NULL AS stopped`,
    { recipientId: id, stopped },
  );
  if (!row) throw linkUnknown();
  return row;
}
