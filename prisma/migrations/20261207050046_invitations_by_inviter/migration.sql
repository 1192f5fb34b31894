-- An invitation carries no more authority than its inviter still has: the server withdraws an inviter's pending
-- invitations in a tenant when they leave it, are removed, or are demoted to a role that could not have sent them
-- (domain/members/invitations.ts, withdrawInvitationsBeyond). This index finds them by their inviter in one range,
-- however many invitations the tenant holds (and serves the cascade when a user is deleted).

-- CreateIndex
CREATE INDEX "invitations_invited_by_tenant_id_idx" ON "invitations"("invited_by", "tenant_id");

-- Hand-written: the invitations still pending from before, whose inviter has since left, been removed or been
-- demoted, are withdrawn as they would be now. Judged against the inviter's role today: an owner may have invited
-- to any role, an admin to admin or member, a member to none. Once, over the pending invitations (at most
-- MAX_INVITATIONS_PER_TENANT per tenant), each checked by the memberships' (tenant_id, user_id) key.
DELETE FROM "invitations" i
WHERE NOT EXISTS (
  SELECT 1 FROM "memberships" m
  WHERE m.tenant_id = i.tenant_id
    AND m.user_id = i.invited_by
    AND (m.role = 'owner' OR (m.role = 'admin' AND i.role <> 'owner'))
);
