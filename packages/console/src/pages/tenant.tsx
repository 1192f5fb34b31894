import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { useSession } from '../api/auth';
import { useCreate } from '../api/mutations';
import { abilitiesIn } from '../api/permissions';
import { fieldErrors, withTag } from '../api/problems';
import { keys, useRequestSearch, useTenant, useWorkSearch, useWorks } from '../api/queries';
import type { DiscardedFilter, Tenant } from '../api/types';
import {
  SearchForm,
  SelectField,
  SubForm,
  SubmitButton,
  TextArea,
  TextField,
  useFormState,
} from '../components/fields';
import { Loading, PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { MutationError, ProblemAlert } from '../components/problem';
import { formatTime, personName } from '../components/format';
import { MembersSection } from './tenant-members';

export function TenantPage() {
  const { tenantId } = useParams<{ tenantId: string }>();
  const { me } = useSession();
  const query = useTenant(tenantId);
  if (query.isPending) return <Loading what="the tenant" />;
  if (query.isError) {
    return (
      <Page title="Tenant">
        <ProblemAlert error={query.error} />
        <p>
          <Link href="/">Back to your tenants</Link>
        </p>
      </Page>
    );
  }
  const { tenant, etag } = query.data;
  const abilities = abilitiesIn(tenant, me);
  return (
    <Page title={tenant.name} eyebrow={<Crumbs />}>
      <p className="subtitle">
        <span className="muted">{tenant.slug}</span> · your role:{' '}
        <span className="badge">{abilities.role ?? 'member'}</span> · created {formatTime(tenant.createdAt)}
      </p>
      <p className="links">
        <Link href={`/tenants/${tenant.id}/requests`}>All requests</Link> ·{' '}
        <Link href={`/tenants/${tenant.id}/events`}>Events</Link>
      </p>
      <div className="columns">
        <div className="stack">
          <SearchSection tenantId={tenant.id} />
          <WorksSection tenantId={tenant.id} />
        </div>
        <div className="stack">
          {abilities.renameTenant && <RenameTenant key={etag} tenant={tenant} etag={etag} />}
          <MembersSection tenant={tenant} abilities={abilities} />
        </div>
      </div>
    </Page>
  );
}

/**
 * One box for works and requests: every word must start a word of the name, slug or description of a work, or of
 * a request's title, message or recipient; accents and case do not matter.
 */
function SearchSection({ tenantId }: { tenantId: string }) {
  const [q, setQ] = useState('');
  const works = useWorkSearch(tenantId, q);
  const requests = useRequestSearch(tenantId, q);
  return (
    <Section title="Search" id="search">
      <SearchForm
        label="Search works and requests"
        hint="Words match from their start: “rap ete” finds “Rapport d’été”."
        onSearch={setQ}
      />
      {q !== '' && (
        <div aria-live="polite">
          <h3>Works</h3>
          <PagedList query={works} noun="works" empty="No work matches.">
            {(nodes) => (
              <ul className="rows">
                {nodes.map((work) => (
                  <li key={work.id} className="row">
                    <Link href={`/tenants/${tenantId}/works/${work.id}`} className="row-title">
                      {work.name}
                    </Link>
                    <span className="muted">{work.slug}</span>
                  </li>
                ))}
              </ul>
            )}
          </PagedList>
          <h3>Requests</h3>
          <PagedList query={requests} noun="requests" empty="No request matches.">
            {(nodes) => (
              <ul className="rows">
                {nodes.map((request) => (
                  <li key={request.id} className="row">
                    <Link
                      href={`/tenants/${tenantId}/works/${request.workId}/requests/${request.id}`}
                      className="row-title"
                    >
                      {request.title}
                    </Link>
                    <span className="muted">to {personName(request.recipient) || request.recipient.email}</span>
                  </li>
                ))}
              </ul>
            )}
          </PagedList>
        </div>
      )}
    </Section>
  );
}

function Crumbs() {
  return (
    <nav aria-label="Breadcrumb">
      <Link href="/">Tenants</Link>
    </nav>
  );
}

function RenameTenant({ tenant, etag }: { tenant: Tenant; etag: string | null }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [name, setName] = useState(tenant.name);
  const rename = useMutation({
    mutationFn: () =>
      withTag(
        api.updateTenant({
          params: { path: { tenant_id: tenant.id }, ...(etag ? { header: { 'If-Match': etag } } : {}) },
          body: { name },
        }),
      ),
    onSuccess: ({ data, etag: newTag }) => {
      queryClient.setQueryData(keys.tenant(tenant.id), { tenant: data.tenant, etag: newTag });
      void queryClient.invalidateQueries({ queryKey: keys.tenants });
    },
  });
  const reload = () => void queryClient.invalidateQueries({ queryKey: keys.tenant(tenant.id), exact: true });
  const errors = fieldErrors(rename.error);
  return (
    <Section title="Rename" id="rename-tenant">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          rename.mutate();
        }}
      >
        <TextField
          label="Tenant name"
          required
          value={name}
          onChange={(event) => setName(event.target.value)}
          error={errors.name}
        />
        <SubmitButton pending={rename.isPending} label="Rename" pendingLabel="Saving…" />
      </form>
      <MutationError error={rename.error} what="tenant" onReload={reload} shownFields={['name']} />
    </Section>
  );
}

const discardedOptions = [
  { value: 'false', label: 'Kept' },
  { value: 'true', label: 'Discarded' },
  { value: 'all', label: 'All' },
] as const satisfies readonly { value: DiscardedFilter; label: string }[];

function WorksSection({ tenantId }: { tenantId: string }) {
  const [filter, setFilter] = useState<DiscardedFilter>('false');
  const works = useWorks(tenantId, filter);
  return (
    <Section title="Works" id="works">
      <div className="filter">
        <SelectField label="Show" value={filter} options={discardedOptions} onChange={setFilter} />
      </div>
      <PagedList
        query={works}
        noun="works"
        empty={
          filter === 'true'
            ? 'No discarded works.'
            : filter === 'all'
              ? 'No works yet.'
              : 'No works yet: create the first one.'
        }
      >
        {(nodes) => (
          <ul className="rows">
            {nodes.map((work) => (
              <li key={work.id} className="row">
                <Link href={`/tenants/${tenantId}/works/${work.id}`} className="row-title">
                  {work.name}
                </Link>
                <span className="muted">{work.description || 'No description'}</span>
                <span className="row-meta">
                  {work.discardedAt ? <span className="badge badge-muted">discarded</span> : null} created{' '}
                  {formatTime(work.createdAt)} by {personName(work.owner) || work.owner.email}
                </span>
              </li>
            ))}
          </ul>
        )}
      </PagedList>
      <CreateWork tenantId={tenantId} />
    </Section>
  );
}

function CreateWork({ tenantId }: { tenantId: string }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const { form, bind } = useFormState({ name: '', description: '' });
  const create = useCreate(
    (body: typeof form, key) =>
      withTag(api.createWork({ params: { path: { tenant_id: tenantId }, header: { 'Idempotency-Key': key } }, body })),
    ({ data, etag }) => {
      queryClient.setQueryData(keys.work(tenantId, data.work.id), { work: data.work, etag });
      void queryClient.invalidateQueries({ queryKey: keys.tenant(tenantId) });
      navigate(`/tenants/${tenantId}/works/${data.work.id}`);
    },
  );
  const errors = fieldErrors(create.error);
  return (
    <SubForm title="Create a work" onSubmit={() => create.submit(form)}>
      <TextField label="Work name" required {...bind('name')} error={errors.name} />
      <TextArea label="Description" {...bind('description')} error={errors.description} hint="Optional" />
      <SubmitButton pending={create.isPending} label="Create work" pendingLabel="Creating…" />
      {create.error && <ProblemAlert error={create.error} shownFields={['name', 'description']} />}
    </SubForm>
  );
}
