import { type Queryable, sendStatement } from './send';
import { newId } from '../ids';

/**
 * The addresses the service emails, and the daily caps of every email (migration mail_caps_across_tenants): the
 * database function `take_mail_allowance` counts one email in the statement that queues it, under four caps, each
 * an O(1) upsert of a row per canonical address, or a striped budget of a few rows; over one it raises its SQLSTATE
 * and the whole statement aborts (nothing created, nothing counted):
 *
 * | SQLSTATE | Cap | Counted in |
 * |---|---|---|
 * | WA001 | one tenant to one address (MAX_EMAILS_PER_RECIPIENT_PER_DAY) | mail_recipients (tenant, address) |
 * | WA003 | the whole service to one address (MAX_EMAILS_PER_ADDRESS_PER_DAY) | mail_addresses (address) |
 * | WA002 | one tenant in all (MAX_EMAILS_PER_TENANT_PER_DAY) | tenant_mail_days (tenant, slot) |
 * | WA004 | one sending user across their tenants (MAX_EMAILS_PER_SENDER_PER_DAY) | user_mail_days (user, slot) |
 *
 * Addresses are counted and stopped in their canonical form (`canonical_email`: lower case, no `+tag`, Gmail's
 * dots dropped).
 */

/** The four daily caps, as the allowance takes them. */
export interface MailAllowanceCaps {
  emailsPerRecipientPerDay: number;
  emailsPerTenantPerDay: number;
  emailsPerAddressPerDay: number;
  emailsPerSenderPerDay: number;
}

/**
 * Whose email it is:
 * - a tenant's, caused by one of its members (`senderId`: who sent, resent or invited): every cap, and the
 *   address's stops (of that tenant, of the whole service) hold;
 * - one the address asked for itself (a sign-in link; `tenantId` and `senderId` null): only the address's
 *   service-wide cap, and it goes whatever the address stopped, so that no stop locks a person out.
 */
export type MailAllowanceFor =
  { kind: 'tenant'; tenantId: string; senderId: string; email: string } | { kind: 'asked-by-address'; email: string };

/**
 * The SQL call taking one email's place, with named parameters (`sendStatement`): `true` when the
 * address stopped these emails (nothing counted, nothing to send), `false` once counted. `mailAllowanceParams`
 * gives its values. Embedded in the statement that queues the email, so that a refusal leaves nothing behind.
 */
export const MAIL_ALLOWANCE_CALL =
  'take_mail_allowance(:allowanceTenantId::uuid, :allowanceSenderId::uuid, :allowanceEmail::text, ' +
  ':allowanceDay::date, :allowanceRecipientId::uuid, :emailsPerRecipientPerDay::int, :emailsPerTenantPerDay::int, ' +
  ':emailsPerAddressPerDay::int, :emailsPerSenderPerDay::int, :allowanceStoppable::boolean)';

/** The UTC day an email counts in, as the `date` the function takes. */
export const mailDay = (now: Date): string => now.toISOString().slice(0, 10);

export const mailAllowanceParams = (of: MailAllowanceFor, caps: MailAllowanceCaps, now: Date) => ({
  allowanceTenantId: of.kind === 'tenant' ? of.tenantId : null,
  allowanceSenderId: of.kind === 'tenant' ? of.senderId : null,
  allowanceEmail: of.email,
  allowanceDay: mailDay(now),
  allowanceRecipientId: newId(),
  emailsPerRecipientPerDay: caps.emailsPerRecipientPerDay,
  emailsPerTenantPerDay: caps.emailsPerTenantPerDay,
  emailsPerAddressPerDay: caps.emailsPerAddressPerDay,
  emailsPerSenderPerDay: caps.emailsPerSenderPerDay,
  allowanceStoppable: of.kind === 'tenant',
});

/**
 * Takes one email's place in a statement of its own (inside the caller's transaction when `db` is one), for an
 * email kind whose queuing statement cannot embed `MAIL_ALLOWANCE_CALL`: resolves `true` when the address stopped
 * these emails (send nothing), `false` once counted; rejects with the cap's SQLSTATE (WA001 to WA004) over one.
 */
export async function takeMailAllowance(
  db: Queryable,
  of: MailAllowanceFor,
  caps: MailAllowanceCaps,
  now = new Date(),
): Promise<boolean> {
  const [row] = await sendStatement<{ stopped: boolean }>(
    db,
    `SELECT ${MAIL_ALLOWANCE_CALL} AS stopped`,
    mailAllowanceParams(of, caps, now),
  );
  return row?.stopped ?? false;
}

/** What a stop link's page shows: the tenant, the canonical address, and which of its emails it stopped. */
export interface StopLinkState {
  tenantName: string;
  email: string;
  /** The address stopped this tenant's emails. */
  stopped: boolean;
  /** The address stopped every email of the service (sign-in links it asks for aside). */
  stoppedEverywhere: boolean;
}

/**
 * The state of the address a stop link names (`mail_recipients.id`), read through its tenant's canonical row (a
 * row written before addresses were made canonical names it by its canonical address): none for an unknown id.
 */
export async function findStopLinkState(db: Queryable, recipientId: string): Promise<StopLinkState | undefined> {
  const [row] = await sendStatement<StopLinkState>(
    db,
    `SELECT t.name AS "tenantName", canonical_email(l.email) AS email,
            CASE WHEN r.id IS NULL THEN l.stopped_at IS NOT NULL ELSE r.stopped_at IS NOT NULL END AS stopped,
            a.stopped_at IS NOT NULL AS "stoppedEverywhere"
     FROM mail_recipients l
     JOIN tenants t ON t.id = l.tenant_id
     LEFT JOIN mail_recipients r ON r.tenant_id = l.tenant_id AND r.email = canonical_email(l.email)
     LEFT JOIN mail_addresses a ON a.email = canonical_email(l.email)
     WHERE l.id = :recipientId::uuid`,
    { recipientId },
  );
  return row;
}

/**
 * Stops (`true`) or resumes (`false`) the tenant's emails to the canonical address of the row a stop link names,
 * making its canonical row if there is none; stopping twice keeps the first time. False for an unknown id.
 */
export async function setTenantEmailsStopped(db: Queryable, recipientId: string, stopped: boolean): Promise<boolean> {
  const rows = await sendStatement<{ id: string }>(
    db,
    `INSERT INTO mail_recipients AS r (tenant_id, email, id, day, sent, stopped_at)
     SELECT l.tenant_id, canonical_email(l.email), :newId::uuid, l.day, 0, CASE WHEN :stopped THEN now() END
     FROM mail_recipients l WHERE l.id = :recipientId::uuid
     ON CONFLICT (tenant_id, email) DO UPDATE
     SET stopped_at = CASE WHEN :stopped THEN coalesce(r.stopped_at, now()) END
     RETURNING r.id`,
    { recipientId, stopped, newId: newId() },
  );
  return rows.length > 0;
}

/**
 * Stops (`true`) or resumes (`false`) every email of the service to the canonical address of the row a stop link
 * names, from every tenant (requests, reminders, resends, invitations; not the sign-in links the address asks
 * for); stopping twice keeps the first time. False for an unknown id.
 */
export async function setServiceEmailsStopped(db: Queryable, recipientId: string, stopped: boolean): Promise<boolean> {
  const rows = await sendStatement<{ email: string }>(
    db,
    `INSERT INTO mail_addresses AS a (email, day, sent, stopped_at)
     SELECT canonical_email(l.email), l.day, 0, CASE WHEN :stopped THEN now() END
     FROM mail_recipients l WHERE l.id = :recipientId::uuid
     ON CONFLICT (email) DO UPDATE SET stopped_at = CASE WHEN :stopped THEN coalesce(a.stopped_at, now()) END
     RETURNING a.email`,
    { recipientId, stopped },
  );
  return rows.length > 0;
}
