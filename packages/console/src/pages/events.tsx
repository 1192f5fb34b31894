import { useState } from 'react';
import { Link, useParams } from 'wouter';
import { useTenant, useTenantEvents } from '../api/queries';
import type { TenantEvent } from '../api/types';
import { formatTime, personName } from '../components/format';
import { Loading, PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { ProblemAlert } from '../components/problem';

const types = [
  { value: 'request.created', label: 'Request sent' },
  { value: 'request.confirmed', label: 'Request confirmed' },
  { value: 'request.validated', label: 'Request validated' },
  { value: 'request.cancelled', label: 'Request cancelled' },
  { value: 'work.discarded', label: 'Work discarded' },
  { value: 'work.undiscarded', label: 'Work restored' },
  { value: 'member.added', label: 'Member added' },
  { value: 'member.role_changed', label: 'Member role changed' },
  { value: 'member.removed', label: 'Member removed' },
] as const;

/** What an event is about, in words, with a link to it where it still can be opened. */
function Summary({ tenantId, event }: { tenantId: string; event: TenantEvent }) {
  switch (event.type) {
    case 'request.created':
    case 'request.confirmed':
    case 'request.validated':
    case 'request.cancelled': {
      const { request } = event.data;
      return (
        <Link href={`/tenants/${tenantId}/works/${request.workId}/requests/${request.id}`} className="row-title">
          {request.title}
        </Link>
      );
    }
    case 'work.discarded':
    case 'work.undiscarded':
      return (
        <Link href={`/tenants/${tenantId}/works/${event.data.work.id}`} className="row-title">
          {event.data.work.name}
        </Link>
      );
    case 'member.added':
    case 'member.role_changed':
    case 'member.removed': {
      const { user } = event.data.member;
      return <span className="row-title">{personName(user) || user.email}</span>;
    }
    default:
      return <span className="row-title">{event.type}</span>;
  }
}

/** The tenant's events feed: what its webhooks are sent, newest first, kept 30 days. */
export function EventsPage() {
  const { tenantId } = useParams<{ tenantId: string }>();
  const tenant = useTenant(tenantId);
  // The types chosen; none is every type.
  const [chosen, setChosen] = useState<readonly string[]>([]);
  const events = useTenantEvents(tenantId, chosen);
  if (tenant.isPending) return <Loading what="the tenant" />;
  if (tenant.isError) return <ProblemAlert error={tenant.error} />;
  const label = (value: string) => types.find((t) => t.value === value)?.label ?? value;
  return (
    <Page
      title="Events"
      eyebrow={
        <nav aria-label="Breadcrumb">
          <Link href="/">Tenants</Link> / <Link href={`/tenants/${tenantId}`}>{tenant.data.tenant.name}</Link>
        </nav>
      }
    >
      <p className="subtitle muted">What the tenant’s webhooks are sent, newest first. Events are kept for 30 days.</p>
      <Section title="Feed" id="events">
        <fieldset className="filter checks">
          <legend>Types</legend>
          <p className="hint">None chosen: every type.</p>
          <div className="check-list">
            {types.map((t) => (
              <label key={t.value} className="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(t.value)}
                  onChange={(event) =>
                    setChosen((current) =>
                      event.target.checked ? [...current, t.value] : current.filter((value) => value !== t.value),
                    )
                  }
                />
                {t.label}
              </label>
            ))}
          </div>
        </fieldset>
        <PagedList query={events} noun="events" empty="No events in the last 30 days.">
          {(nodes) => (
            <ul className="rows">
              {nodes.map((event) => (
                <li key={event.id} className="row">
                  <Summary tenantId={tenantId} event={event} />
                  <span className="muted">
                    {label(event.type)} · {formatTime(event.createdAt)}
                  </span>
                  <span className="row-meta">
                    <code>{event.type}</code>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </PagedList>
      </Section>
    </Page>
  );
}
