import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useLocation } from 'wouter';
import { useSession } from '../api/auth';
import { dataOf } from '../api/problems';
import { keys, useMyInvitations } from '../api/queries';
import type { Invitation } from '../api/types';
import { ConfirmButton } from '../components/confirm';
import { formatTime, personName } from '../components/format';
import { PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { ProblemAlert } from '../components/problem';

/**
 * The signed-in user's pending invitations (where the invitation email links): which tenant, which role, who
 * invited them and until when. Nobody joins a tenant without accepting here.
 */
export function InvitationsPage() {
  const invitations = useMyInvitations();
  return (
    <Page title="Invitations">
      <Section title="Your pending invitations" id="invitations">
        <PagedList query={invitations} noun="invitations" empty="You have no pending invitations.">
          {(nodes) => (
            <ul className="rows">
              {nodes.map((invitation) => (
                <InvitationRow key={invitation.id} invitation={invitation} />
              ))}
            </ul>
          )}
        </PagedList>
      </Section>
    </Page>
  );
}

function InvitationRow({ invitation }: { invitation: Invitation }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const path = { invitation_id: invitation.id };
  const accept = useMutation({
    mutationFn: () => dataOf(api.acceptInvitation({ params: { path } })),
    onSuccess: ({ tenant }) => {
      void queryClient.invalidateQueries({ queryKey: keys.myInvitations });
      void queryClient.invalidateQueries({ queryKey: keys.tenants });
      navigate(`/tenants/${tenant.id}`);
    },
  });
  const decline = useMutation({
    mutationFn: () => dataOf(api.declineInvitation({ params: { path } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.myInvitations }),
  });
  const inviter = personName(invitation.invitedBy);
  return (
    <li className="row" aria-label={`Invitation to ${invitation.tenant.name}`}>
      <span className="row-title">{invitation.tenant.name}</span>
      <span className="muted">
        as <span className="badge">{invitation.role}</span>, from{' '}
        {inviter ? `${inviter} (${invitation.invitedBy.email})` : invitation.invitedBy.email} · until{' '}
        {formatTime(invitation.expiresAt)}
      </span>
      <span className="row-meta">
        <button
          type="button"
          className="button button-primary"
          disabled={accept.isPending || decline.isPending}
          onClick={() => accept.mutate()}
        >
          {accept.isPending ? 'Joining…' : 'Accept'}
        </button>
        <ConfirmButton
          label="Decline"
          question={`Decline the invitation to ${invitation.tenant.name}?`}
          confirmLabel="Yes, decline"
          pending={decline.isPending}
          onConfirm={() => decline.mutate()}
        />
      </span>
      {accept.error && <ProblemAlert error={accept.error} />}
      {decline.error && <ProblemAlert error={decline.error} />}
    </li>
  );
}
