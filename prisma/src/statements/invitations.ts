import type { Db } from '../handle';
import type { Prisma } from '../generated/client';
import { MAIL_COLUMNS } from './mail';
import { newestFirst, type PageWindow } from './pages';
import { sendStatement } from './send';
import { userRecord } from './users';

/**
 * A tenant's invitations: created and withdrawn under the tenant's membership lock (members.ts), read by the
 * tenant's admins and by the invited person (by their email), accepted by deleting them.
 */

/** What an invitation is read with: its inviter's user record and its tenant's id and name. */
const withInviterAndTenant = { inviter: userRecord, tenant: { select: { id: true, name: true } } } as const;

/** An invitation as read with its inviter and tenant. */
export type InvitationRow = Prisma.InvitationGetPayload<{ include: typeof withInviterAndTenant }>;

type Role = InvitationRow['role'];

/** Deletes the tenant's expired invitations (they neither count nor block inviting their email again). */
export async function deleteExpiredInvitations(tx: Prisma.TransactionClient, tenantId: string, now: Date) {
  await sendStatement(
    tx,
    'DELETE FROM invitations WHERE tenant_id = :tenantId::uuid AND expires_at <= :now::timestamptz',
    {
      tenantId,
      now: now.toISOString(),
    },
  );
}

/** The tenant's invitations, counted up to `cap` (reading at most `cap` rows), and whether `email` is among them. */
export async function countInvitationsAndFind(
  tx: Prisma.TransactionClient,
  tenantId: string,
  email: string,
  cap: number,
): Promise<{ n: number; invited: boolean }> {
  const [counted] = await sendStatement<{ n: number; invited: boolean }>(
    tx,
    `SELECT (SELECT count(*)::int FROM (SELECT 1 FROM invitations WHERE tenant_id = :tenantId::uuid LIMIT :cap) bounded) AS n,
           EXISTS (SELECT 1 FROM invitations WHERE tenant_id = :tenantId::uuid AND email = :email) AS invited`,
    { tenantId, cap, email },
  );
  return counted ?? { n: 0, invited: false };
}

/** A new invitation's columns. */
export interface NewInvitationRow {
  id: string;
  tenantId: string;
  invitedBy: string;
  email: string;
  role: Role;
  firstName: string;
  lastName: string;
  createdAt: Date;
  expiresAt: Date;
}

export function insertInvitation(tx: Prisma.TransactionClient, data: NewInvitationRow): Promise<InvitationRow> {
  return tx.invitation.create({ data, include: withInviterAndTenant });
}

/** Queues an invitation's email (the mail sender renders it when it sends it). */
export async function queueInvitationEmail(
  tx: Prisma.TransactionClient,
  params: { mailId: string; tenantId: string; invitationId: string; now: Date },
): Promise<void> {
  await sendStatement(
    tx,
    `INSERT INTO mail_outbox (${MAIL_COLUMNS})
     VALUES (:mailId::uuid, 'invitation', :tenantId::uuid, NULL, :invitationId::uuid, :now::timestamptz, :now::timestamptz)`,
    { ...params, now: params.now.toISOString() },
  );
}

/** A page of the tenant's invitations, newest first, expired ones included until replaced. */
export function invitationsPage(db: Db, tenantId: string, page: PageWindow): Promise<InvitationRow[]> {
  const { where, ...window } = newestFirst(page, 'id');
  return db.prisma.invitation.findMany({ where: { tenantId, ...where }, include: withInviterAndTenant, ...window });
}

/** The tenant's invitations: a list the cap bounds, so its count reads at most that many index entries. */
export function countInvitationsOf(db: Db, tenantId: string): Promise<number> {
  return db.prisma.invitation.count({ where: { tenantId } });
}

/**
 * Withdraws the invitations `inviterId` sent to the tenant to a role not in `kept`: one range of the
 * (invited_by, tenant_id) index.
 */
export async function deleteInvitationsBeyond(
  tx: Prisma.TransactionClient,
  params: { tenantId: string; inviterId: string; kept: readonly Role[] },
): Promise<void> {
  await sendStatement(
    tx,
    `DELETE FROM invitations
    WHERE invited_by = :inviterId::uuid AND tenant_id = :tenantId::uuid AND NOT (role::text = ANY(:kept::text[]))`,
    params,
  );
}

/** Deletes the tenant's invitation if its role is one of `roles`; whether it did. */
export async function deleteInvitationTo(
  db: Db,
  params: { id: string; tenantId: string; roles: readonly Role[] },
): Promise<boolean> {
  const { count } = await db.prisma.invitation.deleteMany({
    where: { id: params.id, tenantId: params.tenantId, role: { in: [...params.roles] } },
  });
  return count > 0;
}

/** Whether the tenant has this invitation. */
export async function invitationExists(db: Db, id: string, tenantId: string): Promise<boolean> {
  return (await db.prisma.invitation.findFirst({ where: { id, tenantId }, select: { id: true } })) !== null;
}

/** The pending invitations of an email: to it, not expired. */
const pendingFor = (email: string, now: Date) => ({ email, expiresAt: { gt: now } });

/** A page of an email's pending invitations, newest first, by (email, id). */
export function pendingInvitationsPage(db: Db, email: string, now: Date, page: PageWindow): Promise<InvitationRow[]> {
  const { where, ...window } = newestFirst(page, 'id');
  return db.prisma.invitation.findMany({
    where: { ...pendingFor(email, now), ...where },
    include: withInviterAndTenant,
    ...window,
  });
}

/** An email's pending invitations: at most one per tenant that invited it, a list that stays short. */
export function countPendingInvitations(db: Db, email: string, now: Date): Promise<number> {
  return db.prisma.invitation.count({ where: pendingFor(email, now) });
}

/** The tenant of a pending invitation of the email (null: none). */
export function findPendingInvitation(db: Db, id: string, email: string, now: Date) {
  return db.prisma.invitation.findFirst({ where: { id, ...pendingFor(email, now) }, select: { tenantId: true } });
}

/** Deletes a pending invitation of the email, to accept it: its role, or undefined when it was not pending. */
export async function takePendingInvitation(
  tx: Prisma.TransactionClient,
  params: { id: string; email: string; now: Date },
): Promise<Role | undefined> {
  const [taken] = await sendStatement<{ role: Role }>(
    tx,
    `DELETE FROM invitations
      WHERE id = :id::uuid AND email = :email AND expires_at > :now::timestamptz
      RETURNING role::text AS role`,
    { ...params, now: params.now.toISOString() },
  );
  return taken?.role;
}

/** Deletes (declines) a pending invitation of the email; whether there was one. */
export async function declinePendingInvitation(db: Db, id: string, email: string, now: Date): Promise<boolean> {
  const { count } = await db.prisma.invitation.deleteMany({ where: { id, ...pendingFor(email, now) } });
  return count > 0;
}
