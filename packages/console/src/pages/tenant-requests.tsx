import { useState } from 'react';
import { Link, useParams } from 'wouter';
import { type InboxView, useTenant, useTenantRequests } from '../api/queries';
import { SearchForm, SelectField } from '../components/fields';
import { Loading, PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { ProblemAlert } from '../components/problem';
import { RequestRows } from './request-rows';

const views = [
  { value: 'all', label: 'All' },
  { value: 'pending', label: 'Pending' },
  { value: 'confirmed', label: 'Confirmed, waiting for validation' },
  { value: 'overdue', label: 'Overdue' },
  { value: 'validated', label: 'Validated' },
  { value: 'cancelled', label: 'Cancelled' },
] as const satisfies readonly { value: InboxView; label: string }[];

const emptyText: Record<InboxView, string> = {
  all: 'No requests yet.',
  pending: 'No pending requests.',
  confirmed: 'No confirmed requests wait for validation.',
  overdue: 'No overdue requests.',
  validated: 'No validated requests.',
  cancelled: 'No cancelled requests.',
};

/** The tenant's requests across all its kept works, by status, newest first; searched by title, message, recipient. */
export function TenantRequestsPage() {
  const { tenantId } = useParams<{ tenantId: string }>();
  const tenant = useTenant(tenantId);
  const [view, setView] = useState<InboxView>('all');
  // "Overdue" is as of when the view was chosen, so the list does not move while it is read.
  const [now, setNow] = useState(() => new Date().toISOString());
  const [q, setQ] = useState('');
  const requests = useTenantRequests(tenantId, view, now, q);
  if (tenant.isPending) return <Loading what="the tenant" />;
  if (tenant.isError) return <ProblemAlert error={tenant.error} />;
  return (
    <Page
      title="Requests"
      eyebrow={
        <nav aria-label="Breadcrumb">
          <Link href="/">Tenants</Link> / <Link href={`/tenants/${tenantId}`}>{tenant.data.tenant.name}</Link>
        </nav>
      }
    >
      <p className="subtitle muted">Every request in the tenant’s works, newest first.</p>
      <Section title="All works" id="tenant-requests">
        <div className="filter filter-row">
          <SelectField
            label="Show"
            value={view}
            options={views}
            onChange={(next) => {
              setView(next);
              setNow(new Date().toISOString());
            }}
          />
          <SearchForm
            formLabel="Search the requests"
            className="filter-search"
            label="Search requests"
            hint="Title, message or recipient; words match from their start."
            onSearch={(next) => {
              setQ(next);
              setNow(new Date().toISOString());
            }}
          />
        </div>
        <PagedList query={requests} noun="requests" empty={q === '' ? emptyText[view] : 'No request matches.'}>
          {(nodes) => <RequestRows tenantId={tenantId} requests={nodes} />}
        </PagedList>
      </Section>
    </Page>
  );
}
