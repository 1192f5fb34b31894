import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'wouter';
import { useSession } from '../api/auth';
import { canDo } from '../api/permissions';
import { withTag } from '../api/problems';
import { keys, useRequest, useRequestEvents, useTenant, useWork } from '../api/queries';
import type { Request, RequestAction, RequestEvent, RequestStatus } from '../api/types';
import { TextArea } from '../components/fields';
import { formatTime, personName } from '../components/format';
import { Loading, PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { MutationError, ProblemAlert } from '../components/problem';

export function RequestPage() {
  const { tenantId, workId, requestId } = useParams<{ tenantId: string; workId: string; requestId: string }>();
  const tenant = useTenant(tenantId);
  const work = useWork(tenantId, workId);
  const query = useRequest(tenantId, workId, requestId);
  // The same query as the History's: who confirmed is its `confirm` event (a request has at most three events,
  // so it is on the first page).
  const events = useRequestEvents(tenantId, workId, requestId);
  const confirmation = events.data?.pages
    .flatMap((page) => page.edges.map((edge) => edge.node))
    .find((event) => event.action === 'confirm');
  if (query.isPending || work.isPending || tenant.isPending) return <Loading what="the request" />;
  if (query.isError || work.isError || tenant.isError) {
    return (
      <Page title="Request">
        <ProblemAlert error={query.error ?? work.error ?? tenant.error} />
        <p>
          <Link href={`/tenants/${tenantId}/works/${workId}`}>Back to the work</Link>
        </p>
      </Page>
    );
  }
  const { request, etag } = query.data;
  const discarded = work.data.work.discardedAt !== null;
  return (
    <Page
      title={request.title}
      eyebrow={
        <nav aria-label="Breadcrumb">
          <Link href="/">Tenants</Link> / <Link href={`/tenants/${tenantId}`}>{tenant.data.tenant.name}</Link> /{' '}
          <Link href={`/tenants/${tenantId}/works/${workId}`}>{work.data.work.name}</Link>
        </nav>
      }
    >
      <p className="subtitle">
        Status: <StatusBadge status={request.status} />
        {request.validation && <> · validation: {request.validation === 'early' ? 'early' : 'standard'}</>}
      </p>
      <div className="columns">
        <div className="stack">
          <Details request={request} confirmation={confirmation} />
          <Timeline tenantId={tenantId} workId={workId} request={request} />
        </div>
        <div className="stack">
          {discarded ? (
            <p className="alert alert-info">The work is discarded: its requests are read-only until it is restored.</p>
          ) : (
            <Actions key={etag} tenantId={tenantId} workId={workId} request={request} etag={etag} />
          )}
        </div>
      </div>
    </Page>
  );
}

export function StatusBadge({ status }: { status: RequestStatus }) {
  return <span className={`badge status-${status}`}>{status}</span>;
}

/** Who performed an event, and how: the recipient through the emailed link, or a member with their key. */
export function actorOf(event: RequestEvent): string {
  const name = personName(event.actor) || event.actor.email;
  if (event.actorType !== 'recipient') return name;
  // A link the dev mailbox kept was readable by the tenant's members: the answer is not known to be the recipient's.
  return event.throughDevMailbox
    ? `someone with the dev mailbox's link for ${name} (no email was sent: not necessarily the recipient)`
    : `${name}, the recipient, through the emailed link`;
}

const deliveryLabels = {
  queued: 'queued: the mail server has not accepted it yet',
  sent: 'sent',
  failed: 'failed',
  dropped: 'not sent: the request stopped taking answers first',
} as const satisfies Record<NonNullable<Request['emailDelivery']>['status'], string>;

function Details({ request, confirmation }: { request: Request; confirmation: RequestEvent | undefined }) {
  const rows: [string, React.ReactNode][] = [
    [
      'Recipient',
      `${personName(request.recipient) ? `${personName(request.recipient)} <${request.recipient.email}>` : request.recipient.email}`,
    ],
    ['Message', request.message || <span className="muted">No message</span>],
    ['Due', request.dueAt ? formatTime(request.dueAt) : <span className="muted">No due date</span>],
    ['Sent by', `${personName(request.owner) || request.owner.email}, ${formatTime(request.createdAt)}`],
    ['Answer', request.answer ?? <span className="muted">No answer yet</span>],
    [
      'Validation',
      request.validation ? (
        `${request.validation}${request.validatedAt ? `, ${formatTime(request.validatedAt)}` : ''}`
      ) : (
        <span className="muted">Not validated</span>
      ),
    ],
  ];
  if (request.emailsStopped) {
    // The recipient used the link every email carries: this tenant's emails no longer reach them.
    rows.splice(4, 0, ['Email', 'not sent: the recipient has stopped emails from this tenant']);
  } else if (request.emailDelivery) {
    const { status, lastSentAt, failure } = request.emailDelivery;
    rows.splice(4, 0, [
      'Email',
      `${deliveryLabels[status]}${lastSentAt ? ` (last sent ${formatTime(lastSentAt)})` : ''}${failure ? `: ${failure}` : ''}`,
    ]);
  }
  if (request.confirmedAt) {
    rows.push([
      'Confirmed',
      `${formatTime(request.confirmedAt)}${confirmation ? `, by ${actorOf(confirmation)}` : ''}`,
    ]);
  }
  if (request.cancelledAt)
    rows.push([
      'Cancelled',
      `${formatTime(request.cancelledAt)}${request.cancelReason ? `: ${request.cancelReason}` : ''}`,
    ]);
  return (
    <Section title="Details" id="details">
      <dl className="details">
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </Section>
  );
}

const actionLabels = {
  confirm: 'Confirm',
  validate: 'Validate',
  early_validate: 'Validate early',
  cancel: 'Cancel request',
} as const satisfies Record<RequestAction, string>;

/** Only the actions the request's status allows; each sends If-Match with the tag this page was read with. */
function Actions({
  tenantId,
  workId,
  request,
  etag,
}: {
  tenantId: string;
  workId: string;
  request: Request;
  etag: string | null;
}) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [answer, setAnswer] = useState('');
  const [reason, setReason] = useState('');
  const action = useMutation({
    mutationFn: (name: RequestAction) => {
      const params = {
        path: { tenant_id: tenantId, work_id: workId, id: request.id },
        ...(etag ? { header: { 'If-Match': etag } } : {}),
      };
      switch (name) {
        case 'confirm':
          return withTag(api.confirmRequest({ params, body: answer ? { answer } : {} }));
        case 'validate':
          return withTag(api.validateRequest({ params }));
        case 'early_validate':
          return withTag(api.earlyValidateRequest({ params }));
        case 'cancel':
          return withTag(api.cancelRequest({ params, body: reason ? { reason } : {} }));
      }
    },
    onSuccess: ({ data, etag: newTag }) => {
      queryClient.setQueryData(keys.request(tenantId, workId, request.id), { request: data, etag: newTag });
      void queryClient.invalidateQueries({ queryKey: keys.events(tenantId, workId, request.id) });
      void queryClient.invalidateQueries({ queryKey: keys.requests(tenantId, workId) });
    },
  });
  const reload = () => {
    action.reset();
    void queryClient.invalidateQueries({ queryKey: keys.request(tenantId, workId, request.id) });
  };
  const can = (name: RequestAction) => canDo(request.status, name);
  const busy = action.isPending;
  const button = (name: RequestAction, className = 'button') => (
    <button
      type="submit"
      className={className}
      disabled={busy}
      aria-busy={(busy && action.variables === name) || undefined}
    >
      {busy && action.variables === name ? `${actionLabels[name]}…` : actionLabels[name]}
    </button>
  );
  const submit = (name: RequestAction) => (event: React.FormEvent) => {
    event.preventDefault();
    action.mutate(name);
  };

  if (!['confirm', 'validate', 'early_validate', 'cancel'].some((name) => can(name as RequestAction))) {
    return (
      <Section title="Actions" id="actions">
        <p className="muted">A {request.status} request takes no further action.</p>
      </Section>
    );
  }
  return (
    <Section title="Actions" id="actions">
      <MutationError error={action.error} what="request" onReload={reload} />
      {can('confirm') && (
        <form className="subform" onSubmit={submit('confirm')} aria-label="Confirm">
          <TextArea
            label="Answer"
            value={answer}
            onChange={(event) => setAnswer(event.target.value)}
            hint="The recipient's answer (optional)"
          />
          {button('confirm', 'button button-primary')}
        </form>
      )}
      {(can('validate') || can('early_validate')) && (
        <div className="subform button-row">
          {can('validate') && <form onSubmit={submit('validate')}>{button('validate', 'button button-primary')}</form>}
          {can('early_validate') && <form onSubmit={submit('early_validate')}>{button('early_validate')}</form>}
        </div>
      )}
      {can('cancel') && (
        <form className="subform" onSubmit={submit('cancel')} aria-label="Cancel">
          <TextArea
            label="Reason for cancelling"
            value={reason}
            onChange={(event) => setReason(event.target.value)}
            hint="Optional"
          />
          {button('cancel', 'button button-danger')}
        </form>
      )}
    </Section>
  );
}

const actionVerbs = {
  confirm: 'confirmed',
  validate: 'validated',
  early_validate: 'validated early',
  cancel: 'cancelled',
} as const satisfies Record<RequestAction, string>;

/** The request's events, newest first as the API pages them, ending with its creation once every page is shown. */
function Timeline({ tenantId, workId, request }: { tenantId: string; workId: string; request: Request }) {
  const events = useRequestEvents(tenantId, workId, request.id);
  const sent = (
    <li className="event">
      <p className="event-title">Sent to {request.recipient.email}</p>
      <p className="muted">
        by {personName(request.owner) || request.owner.email} ·{' '}
        <time dateTime={request.createdAt}>{formatTime(request.createdAt)}</time>
      </p>
    </li>
  );
  return (
    <Section title="History" id="history">
      <PagedList query={events} noun="events" empty={<ol className="timeline">{sent}</ol>}>
        {(nodes) => (
          <ol className="timeline" aria-label="Events, newest first">
            {nodes.map((event) => (
              <li key={event.id} className="event">
                <p className="event-title">
                  {actionVerbs[event.action][0]!.toUpperCase() + actionVerbs[event.action].slice(1)}: {event.fromStatus}{' '}
                  → {event.toStatus}
                </p>
                {event.note && <p className="event-note">“{event.note}”</p>}
                <p className="muted">
                  by {actorOf(event)} · <time dateTime={event.createdAt}>{formatTime(event.createdAt)}</time>
                </p>
              </li>
            ))}
            {!events.hasNextPage && sent}
          </ol>
        )}
      </PagedList>
    </Section>
  );
}
