import type { Db } from '../../db/client';
import type { Invitation, Prisma } from '../../db/generated/client';
import { isId, newId } from '../../db/ids';
import { enqueueMail } from '../../mail/outbox';
import { renderInvitationMail } from '../../mail/render';
import { type Actor, authorize, type Role } from '../access';
import { notFound, ProblemError } from '../errors';
import { invitationLimitReached } from '../limits';
import { newestFirst, type Page, type PageRequest, readPage } from '../paging';
import type { Schemas } from '../schemas';
import { type MemberUserRow, presentUserRecord, userRecord } from '../users/present';
import { outboxRow, type OutboxRow } from '../webhooks/events';
import type { MemberRow } from './members';

/**
 * Pending invitations (issue 23, email squatting): adding an email that no user has creates nothing outside the
 * tenant. The invitation waits, inside its tenant, until the operator creates that user (`adminCreateUser`), which
 * turns every invitation for the email into a membership in the same transaction.
 */
const withInviter = { inviter: userRecord } as const;

/** An invitation as read with its inviter's user record. */
type InvitationRow = Prisma.InvitationGetPayload<{ include: typeof withInviter }>;

export const presentInvitation = (row: InvitationRow): Schemas['Invitation'] => ({
  id: row.id,
  email: row.email,
  role: row.role,
  firstName: row.firstName,
  lastName: row.lastName,
  invitedBy: presentUserRecord(row.inviter),
  createdAt: row.createdAt.toISOString(),
});

/**
 * Serialises, per email, the two transactions that must see each other: an invitation of an email that has no
 * user, and the operator's creation of that user. Without it, each could commit unseen by the other (the
 * invitation finds no user, the creation finds no invitation) and leave an invitation that nothing completes.
 * A transaction-scoped advisory lock: an unrelated email sharing the hash only waits a moment.
 */
export async function lockEmail(tx: Prisma.TransactionClient, email: string): Promise<void> {
  await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(${`invitation:${email}`}, 0))`;
}

/**
 * Inside addMember's transaction (the tenant's membership lock and the email's lock held, no user has the email):
 * creates the invitation and queues its email. At most `cap` invitations per tenant: counted under the tenant's
 * lock, which every invitation insert takes, so concurrent adds cannot pass it. The count reads at most `cap` rows.
 */
export async function createInvitation(
  tx: Prisma.TransactionClient,
  actor: Actor,
  tenantId: string,
  input: { email: string; role: Role; firstName: string; lastName: string },
  cap: number,
): Promise<Schemas['Invitation']> {
  const [counted] = await tx.$queryRaw<Array<{ n: number; invited: boolean }>>`
    SELECT (SELECT count(*)::int FROM (SELECT 1 FROM invitations WHERE tenant_id = ${tenantId}::uuid LIMIT ${cap}) bounded) AS n,
           EXISTS (SELECT 1 FROM invitations WHERE tenant_id = ${tenantId}::uuid AND email = ${input.email}) AS invited`;
  if (counted?.invited) throw alreadyInvited();
  if ((counted?.n ?? 0) >= cap) throw invitationLimitReached(cap);
  const row = await tx.invitation.create({
    data: { id: newId(), tenantId, invitedBy: actor.userId, ...input },
    include: withInviter,
  });
  const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { name: true } });
  // In the transaction: the email is sent only if the invitation commits.
  await enqueueMail(tx as unknown as Db, {
    kind: 'invitation',
    ...renderInvitationMail({
      to: row.email,
      invitee: { firstName: row.firstName },
      inviter: actor.user,
      tenantName: tenant.name,
      role: row.role,
    }),
  });
  return presentInvitation(row);
}

export const alreadyInvited = (): ProblemError =>
  new ProblemError('already_invited', 'This email is already invited to the tenant.');

export async function listInvitations(db: Db, actor: Actor, tenantId: string, request: PageRequest) {
  await authorize(db, actor, tenantId, 'manageMembers');
  return readPage(request, {
    rows: (page: Page) => {
      const { where, ...window } = newestFirst(page, 'id');
      return db.invitation.findMany({ where: { tenantId, ...where }, include: withInviter, ...window });
    },
    // A list the cap bounds (MAX_INVITATIONS_PER_TENANT): its count reads at most that many index entries.
    totalCount: () => db.invitation.count({ where: { tenantId } }),
    present: presentInvitation,
  });
}

/** Withdraws an invitation; only an owner may withdraw one to the owner role (as only an owner may grant it). */
export async function deleteInvitation(db: Db, actor: Actor, tenantId: string, invitationId: string): Promise<void> {
  const caller = await authorize(db, actor, tenantId, 'manageMembers');
  // Checked before any statement: an id that is not one of ours names no invitation, so nothing may be deleted.
  if (!isId(invitationId)) throw notFound('invitation');
  const roles: Role[] = caller.role === 'owner' ? ['owner', 'admin', 'member'] : ['admin', 'member'];
  const { count } = await db.invitation.deleteMany({ where: { id: invitationId, tenantId, role: { in: roles } } });
  if (count > 0) return;
  const exists = await db.invitation.findFirst({ where: { id: invitationId, tenantId }, select: { id: true } });
  if (exists) {
    throw new ProblemError('forbidden', 'Only an owner can grant, change or remove the owner role.');
  }
  throw notFound('invitation');
}

/**
 * Inside the operator's user creation (the email's lock held, the user just inserted): every invitation for the
 * email becomes a membership with its role, each with its `member.added` outbox row (as addMember writes it), and
 * the invitations are deleted. Returns how many memberships it made.
 */
export async function acceptInvitations(
  tx: Prisma.TransactionClient,
  user: MemberUserRow,
  present: (membership: MemberRow) => Schemas['Member'],
): Promise<number> {
  const invitations = await tx.$queryRaw<Array<Pick<Invitation, 'tenantId' | 'role'>>>`
    DELETE FROM invitations WHERE email = ${user.email}
    RETURNING tenant_id::text AS "tenantId", role::text AS role`;
  if (invitations.length === 0) return 0;
  const createdAt = new Date();
  const rows = invitations.map((invitation) => ({
    id: newId(),
    tenantId: invitation.tenantId,
    userId: user.id,
    role: invitation.role,
    createdAt,
  }));
  await tx.membership.createMany({ data: rows });
  const events: OutboxRow[] = rows.map((row) =>
    outboxRow('member.added', row.tenantId, { member: present({ ...row, user }) }, createdAt),
  );
  await tx.webhookEvent.createMany({ data: events });
  return rows.length;
}

/** The names the oldest invitation for `email` suggests, if any: for an operator who gives none. */
export async function suggestedNames(
  tx: Prisma.TransactionClient,
  email: string,
): Promise<{ firstName: string; lastName: string } | null> {
  return tx.invitation.findFirst({
    where: { email, OR: [{ firstName: { not: '' } }, { lastName: { not: '' } }] },
    orderBy: { id: 'asc' },
    select: { firstName: true, lastName: true },
  });
}
