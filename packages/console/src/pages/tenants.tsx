import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useSession } from '../api/auth';
import { useCreate } from '../api/mutations';
import { abilitiesIn } from '../api/permissions';
import { fieldErrors, withTag } from '../api/problems';
import { keys, useMyInvitations, useTenants } from '../api/queries';
import { SubmitButton, TextField } from '../components/fields';
import { PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { ProblemAlert } from '../components/problem';

export function TenantsPage() {
  const { me } = useSession();
  const tenants = useTenants();
  const invitations = useMyInvitations().data?.pages[0]?.totalCount ?? 0;
  return (
    <Page title="Tenants">
      {invitations > 0 && (
        <p className="alert" role="status">
          You have {plural(invitations, 'pending invitation')} to join a tenant.{' '}
          <Link href="/invitations">See and answer {invitations === 1 ? 'it' : 'them'}</Link>
        </p>
      )}
      <div className="columns">
        <Section title="Your tenants" id="tenants">
          <PagedList
            query={tenants}
            noun="tenants"
            empty="You are not a member of any tenant yet. Create one to start."
          >
            {(nodes) => (
              <ul className="rows">
                {nodes.map((tenant) => (
                  <li key={tenant.id} className="row">
                    <Link href={`/tenants/${tenant.id}`} className="row-title">
                      {tenant.name}
                    </Link>
                    <span className="muted">{tenant.slug}</span>
                    <span className="row-meta">
                      <span className="badge">{abilitiesIn(tenant, me).role ?? 'member'}</span>
                      {plural(tenant.works.totalCount, 'work')} · {plural(tenant.members.nodes.length, 'member')}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </PagedList>
        </Section>
        <CreateTenant />
      </div>
    </Page>
  );
}

function CreateTenant() {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const create = useCreate(
    (body: { name: string }, key) =>
      withTag(api.createTenant({ body, params: { header: { 'Idempotency-Key': key } } })),
    ({ data, etag }) => {
      queryClient.setQueryData(keys.tenant(data.tenant.id), { tenant: data.tenant, etag });
      void queryClient.invalidateQueries({ queryKey: keys.tenants });
      setName('');
      navigate(`/tenants/${data.tenant.id}`);
    },
  );
  const errors = fieldErrors(create.error);
  return (
    <Section title="Create a tenant" id="create-tenant">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.submit({ name });
        }}
      >
        <TextField
          label="Name"
          name="name"
          required
          value={name}
          onChange={(event) => setName(event.target.value)}
          error={errors.name}
        />
        <SubmitButton pending={create.isPending} label="Create tenant" pendingLabel="Creating…" />
      </form>
      {create.error && <ProblemAlert error={create.error} shownFields={['name']} />}
    </Section>
  );
}

export const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;
