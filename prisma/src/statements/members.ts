import type { Db } from '../handle';
import type { Prisma } from '../generated/client';
import { countMembersAddedSql } from '../counts';
import { newestFirst, type PageWindow } from './pages';
import { type Queryable, sendStatement } from './send';
import { memberUser } from './users';

/**
 * A tenant's memberships: read with their user as the tenant sees them, and changed (by an accepted invitation, a
 * role change, a removal) inside a transaction that holds the tenant's membership lock (`lockTenantMembers`).
 */

/** What a membership is read with: its user, as a tenant sees them. */
export const withUser = { user: memberUser } as const;

/** A membership as read with its user. */
export type MemberRow = Prisma.MembershipGetPayload<{ include: typeof withUser }>;

type Role = MemberRow['role'];

/**
 * The tenant's membership lock: every change of a tenant's members takes it first, inside its transaction, so that
 * each one sees the others that committed before it. `FOR NO KEY UPDATE` does not block inserts that reference the
 * tenant (works, requests), which only take a key-share lock.
 */
export async function lockTenantMembers(tx: Prisma.TransactionClient, tenantId: string): Promise<void> {
  await sendStatement(tx, 'SELECT 1 FROM tenants WHERE id = :tenantId::uuid FOR NO KEY UPDATE', { tenantId });
}

/** A page of the tenant's members, newest first, by (tenant_id, id). */
export function membersPage(db: Db, tenantId: string, page: PageWindow): Promise<MemberRow[]> {
  const { where, ...window } = newestFirst(page, 'id');
  return db.prisma.membership.findMany({ where: { tenantId, ...where }, include: withUser, ...window });
}

/** One member, with their user (null: not a member); on a handle, or inside a transaction on its client. */
export function findMember(db: Queryable, tenantId: string, userId: string): Promise<MemberRow | null> {
  const client = 'statement' in db ? db.prisma : db;
  return client.membership.findUnique({ where: { tenantId_userId: { tenantId, userId } }, include: withUser });
}

/** Whether a member of the tenant has this email. */
export async function isMemberEmail(tx: Prisma.TransactionClient, tenantId: string, email: string): Promise<boolean> {
  const [member] = await sendStatement<{ found: number }>(
    tx,
    `SELECT 1 AS found FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.tenant_id = :tenantId::uuid AND u.email = :email`,
    { tenantId, email },
  );
  return member !== undefined;
}

/** The tenant's owners, their rows locked for the transaction (so two owners cannot demote each other at once). */
export async function lockTenantOwners(tx: Prisma.TransactionClient, tenantId: string): Promise<string[]> {
  const owners = await sendStatement<{ user_id: string }>(
    tx,
    `SELECT user_id FROM memberships WHERE tenant_id = :tenantId::uuid AND role = 'owner' FOR UPDATE`,
    { tenantId },
  );
  return owners.map((owner) => owner.user_id);
}

/** Gives a membership another role; the membership as it is then. */
export function updateMemberRole(tx: Prisma.TransactionClient, id: string, role: Role): Promise<MemberRow> {
  return tx.membership.update({ where: { id }, data: { role }, include: withUser });
}

export async function deleteMembership(tx: Prisma.TransactionClient, id: string): Promise<void> {
  await tx.membership.delete({ where: { id } });
}

/** A new membership, counted in its tenant's and user's counts (counts.ts); the membership with its user. */
export async function insertMembership(
  tx: Prisma.TransactionClient,
  data: { id: string; tenantId: string; userId: string; role: Role; createdAt: Date },
): Promise<MemberRow> {
  const member = await tx.membership.create({ data, include: withUser });
  await sendStatement(
    tx,
    `WITH added (tenant_id, user_id) AS (VALUES (:tenantId::uuid, :userId::uuid)), ${countMembersAddedSql('added')}
       SELECT 1`,
    { tenantId: data.tenantId, userId: data.userId },
  );
  return member;
}
