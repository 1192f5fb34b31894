import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useLocation } from 'wouter';
import { useSession } from '../api/auth';
import { useCreate } from '../api/mutations';
import { type Abilities, grantableRoles } from '../api/permissions';
import { ChangedElsewhere, dataOf, fieldErrors, toProblem, withTag } from '../api/problems';
import { keys, useMembers } from '../api/queries';
import type { Member, Role, Tenant } from '../api/types';
import { ConfirmButton } from '../components/confirm';
import { SelectField, SubForm, SubmitButton, TextField, useFormState } from '../components/fields';
import { PagedList } from '../components/lists';
import { Section } from '../components/page';
import { MutationError, ProblemAlert } from '../components/problem';
import { personName } from '../components/format';

// A tenant's members on its page: the list, each member's role and removal, and adding one by invitation.
export function MembersSection({ tenant, abilities }: { tenant: Tenant; abilities: Abilities }) {
  const members = useMembers(tenant.id);
  return (
    <Section title="Members" id="members">
      <PagedList query={members} noun="members" empty="No members.">
        {(nodes) => (
          <ul className="rows">
            {nodes.map((member) => (
              <MemberRow
                key={`${member.user.id}:${member.role}`}
                tenantId={tenant.id}
                member={member}
                abilities={abilities}
              />
            ))}
          </ul>
        )}
      </PagedList>
      {abilities.manageMembers ? (
        <AddMember tenantId={tenant.id} abilities={abilities} />
      ) : (
        <p className="muted">Only owners and admins invite, change or remove members.</p>
      )}
    </Section>
  );
}

const roleOptions = (roles: Role[]) => roles.map((role) => ({ value: role, label: role }));

function MemberRow({ tenantId, member, abilities }: { tenantId: string; member: Member; abilities: Abilities }) {
  const { api, me } = useSession();
  const queryClient = useQueryClient();
  const [role, setRole] = useState<Role>(member.role);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keys.tenant(tenantId) });
  const path = { tenant_id: tenantId, user_id: member.user.id };
  // Owners' rows are an owner's business; admins manage admins and members.
  const editable = abilities.manageMembers && (member.role !== 'owner' || abilities.manageOwners);
  const change = useMutation({
    mutationFn: async () => {
      // The list gives no ETags: read this member now, and change the role only if it is still the one this page
      // shows, with If-Match on what was read, so a change made meanwhile (here or in between) is never overwritten.
      const current = await withTag(api.getMember({ params: { path } })).catch((error: unknown) => {
        // Gone since the page read it (or the tenant is, for the caller).
        throw toProblem(error).code === 'not_found' ? new ChangedElsewhere('member') : error;
      });
      if (current.data.member.role !== member.role) throw new ChangedElsewhere('member');
      return dataOf(
        api.updateMember({
          params: { path, ...(current.etag ? { header: { 'If-Match': current.etag } } : {}) },
          body: { role },
        }),
      );
    },
    onSuccess: refresh,
  });
  const reload = () => {
    change.reset();
    refresh();
  };
  const name = personName(member.user);
  const isMe = member.user.email === me.email;
  const [, navigate] = useLocation();
  const remove = useMutation({
    mutationFn: () => dataOf(api.removeMember({ params: { path } })),
    onSuccess: () => {
      if (!isMe) return refresh();
      // Left the tenant: it no longer exists for the caller.
      queryClient.removeQueries({ queryKey: keys.tenant(tenantId) });
      void queryClient.invalidateQueries({ queryKey: keys.tenants });
      navigate('/');
    },
  });
  return (
    <li className="row">
      <span className="row-title">
        {name || member.user.email}
        {isMe && <span className="muted"> (you)</span>}
      </span>
      {name && <span className="muted">{member.user.email}</span>}
      {editable ? (
        <form
          className="inline-form"
          aria-label={`Membership of ${member.user.email}`}
          onSubmit={(event) => {
            event.preventDefault();
            change.mutate();
          }}
        >
          <SelectField
            label={`Role of ${member.user.email}`}
            value={role}
            options={roleOptions(grantableRoles(abilities))}
            onChange={setRole}
          />
          <button type="submit" className="button" disabled={role === member.role || change.isPending}>
            {change.isPending ? 'Saving…' : 'Change role'}
          </button>
          <ConfirmButton
            label="Remove"
            question={
              isMe
                ? 'Leave this tenant? You will need a new invitation to come back.'
                : `Remove ${name || member.user.email}?`
            }
            confirmLabel="Yes, remove"
            pending={remove.isPending}
            onConfirm={() => remove.mutate()}
          />
        </form>
      ) : (
        <span className="row-meta">
          <span className="badge">{member.role}</span>
          {isMe && (
            <ConfirmButton
              label="Leave"
              question="Leave this tenant? You will need a new invitation to come back."
              confirmLabel="Yes, leave"
              pending={remove.isPending}
              onConfirm={() => remove.mutate()}
            />
          )}
        </span>
      )}
      <MutationError error={change.error} what="member" onReload={reload} />
      {remove.error && <ProblemAlert error={remove.error} />}
    </li>
  );
}

function AddMember({ tenantId, abilities }: { tenantId: string; abilities: Abilities }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const { form, setForm, bind, reset } = useFormState<{
    email: string;
    firstName: string;
    lastName: string;
    role: Role;
  }>({
    email: '',
    firstName: '',
    lastName: '',
    role: 'member',
  });
  const add = useCreate(
    (body: typeof form, key) =>
      dataOf(api.addMember({ params: { path: { tenant_id: tenantId }, header: { 'Idempotency-Key': key } }, body })),
    (added) => {
      reset();
      // Always an invitation (202): the person joins when they accept it; say so rather than look like nothing happened.
      setInvited(added.invitation.email);
      void queryClient.invalidateQueries({ queryKey: keys.tenant(tenantId) });
    },
  );
  const [invited, setInvited] = useState<string | null>(null);
  const errors = fieldErrors(add.error);
  return (
    <SubForm title="Invite a member" onSubmit={() => add.submit(form)}>
      <TextField label="Email" type="email" required {...bind('email')} error={errors.email} />
      <div className="field-row">
        <TextField
          label="First name"
          {...bind('firstName')}
          error={errors.firstName}
          hint="Optional: only how the email greets them"
        />
        <TextField label="Last name" {...bind('lastName')} error={errors.lastName} hint="Optional" />
      </div>
      <SelectField
        label="Role"
        value={form.role}
        options={roleOptions(grantableRoles(abilities))}
        onChange={(role) => setForm({ ...form, role })}
        error={errors.role}
      />
      <SubmitButton pending={add.isPending} label="Send invitation" pendingLabel="Inviting…" />
      {invited && !add.error && (
        <p role="status" className="muted">
          Invitation sent to {invited}. They become a member when they accept it (in their console, within the
          invitation&apos;s validity).
        </p>
      )}
      {add.error && <ProblemAlert error={add.error} shownFields={['email', 'firstName', 'lastName', 'role']} />}
    </SubForm>
  );
}
