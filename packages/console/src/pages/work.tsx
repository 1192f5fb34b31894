import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { useSession } from '../api/auth';
import { useCreate } from '../api/mutations';
import { abilitiesIn } from '../api/permissions';
import { fieldErrors, withTag } from '../api/problems';
import { keys, useRequests, useTenant, useWork } from '../api/queries';
import type { RequestStatus, Work } from '../api/types';
import { ConfirmButton } from '../components/confirm';
import { SelectField, SubForm, SubmitButton, TextArea, TextField, useFormState } from '../components/fields';
import { formatTime, personName } from '../components/format';
import { Loading, PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { MutationError, ProblemAlert } from '../components/problem';
import { BulkSend } from './bulk-send';
import { RequestRows } from './request-rows';

export function WorkPage() {
  const { tenantId, workId } = useParams<{ tenantId: string; workId: string }>();
  const { me } = useSession();
  const tenant = useTenant(tenantId);
  const query = useWork(tenantId, workId);
  if (query.isPending || tenant.isPending) return <Loading what="the work" />;
  if (query.isError || tenant.isError) {
    return (
      <Page title="Work">
        <ProblemAlert error={query.error ?? tenant.error} />
        <p>
          <Link href={`/tenants/${tenantId}`}>Back to the tenant</Link>
        </p>
      </Page>
    );
  }
  const { work, etag } = query.data;
  const abilities = abilitiesIn(tenant.data.tenant, me);
  return (
    <Page
      title={work.name}
      eyebrow={
        <nav aria-label="Breadcrumb">
          <Link href="/">Tenants</Link> / <Link href={`/tenants/${tenantId}`}>{tenant.data.tenant.name}</Link>
        </nav>
      }
    >
      <p className="subtitle">
        {work.discardedAt ? <span className="badge badge-muted">discarded {formatTime(work.discardedAt)}</span> : null}{' '}
        <span className="muted">{work.slug}</span> · created {formatTime(work.createdAt)} by{' '}
        {personName(work.owner) || work.owner.email}
      </p>
      {work.description && <p className="description">{work.description}</p>}
      {work.discardedAt && (
        <p className="alert alert-info">This work is discarded: its requests are read-only until it is restored.</p>
      )}
      <div className="columns">
        <div className="stack">
          <RequestsSection tenantId={tenantId} work={work} />
        </div>
        <div className="stack">
          {abilities.manageWorks ? (
            <>
              <EditWork key={etag} tenantId={tenantId} work={work} etag={etag} />
              <DiscardWork tenantId={tenantId} work={work} />
            </>
          ) : (
            <p className="muted card">Only owners and admins edit, discard or restore works.</p>
          )}
        </div>
      </div>
    </Page>
  );
}

function EditWork({ tenantId, work, etag }: { tenantId: string; work: Work; etag: string | null }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [form, setForm] = useState({ name: work.name, description: work.description });
  const save = useMutation({
    mutationFn: () => {
      // Only what changed is sent, so an unchanged field is never written back over someone else's edit.
      const body = {
        ...(form.name !== work.name ? { name: form.name } : {}),
        ...(form.description !== work.description ? { description: form.description } : {}),
      };
      return withTag(
        api.updateWork({
          params: {
            path: { tenant_id: tenantId, work_id: work.id },
            ...(etag ? { header: { 'If-Match': etag } } : {}),
          },
          body,
        }),
      );
    },
    onSuccess: ({ data, etag: newTag }) => {
      queryClient.setQueryData(keys.work(tenantId, work.id), { work: data.work, etag: newTag });
      void queryClient.invalidateQueries({ queryKey: keys.works(tenantId) });
      void queryClient.invalidateQueries({ queryKey: keys.tenant(tenantId), exact: true });
    },
  });
  const reload = () => void queryClient.invalidateQueries({ queryKey: keys.work(tenantId, work.id), exact: true });
  const errors = fieldErrors(save.error);
  const unchanged = form.name === work.name && form.description === work.description;
  return (
    <Section title="Edit" id="edit-work">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate();
        }}
      >
        <TextField
          label="Work name"
          required
          value={form.name}
          onChange={(event) => setForm({ ...form, name: event.target.value })}
          error={errors.name}
        />
        <TextArea
          label="Description"
          value={form.description}
          onChange={(event) => setForm({ ...form, description: event.target.value })}
          error={errors.description}
        />
        <button
          type="submit"
          className="button button-primary"
          disabled={unchanged || save.isPending}
          aria-busy={save.isPending || undefined}
        >
          {save.isPending ? 'Saving…' : 'Save changes'}
        </button>
      </form>
      <MutationError error={save.error} what="work" onReload={reload} shownFields={['name', 'description']} />
    </Section>
  );
}

function DiscardWork({ tenantId, work }: { tenantId: string; work: Work }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const path = { tenant_id: tenantId, work_id: work.id };
  const toggle = useMutation({
    mutationFn: () =>
      withTag(work.discardedAt ? api.undiscardWork({ params: { path } }) : api.discardWork({ params: { path } })),
    onSuccess: ({ data, etag }) => {
      queryClient.setQueryData(keys.work(tenantId, work.id), { work: data.work, etag });
      void queryClient.invalidateQueries({ queryKey: keys.tenant(tenantId) });
    },
  });
  return (
    <Section title={work.discardedAt ? 'Restore' : 'Discard'} id="discard-work">
      {work.discardedAt ? (
        <>
          <p className="muted">Restoring puts the work back in the list and makes its requests editable again.</p>
          <button type="button" className="button" disabled={toggle.isPending} onClick={() => toggle.mutate()}>
            {toggle.isPending ? 'Restoring…' : 'Restore work'}
          </button>
        </>
      ) : (
        <>
          <p className="muted">
            A discarded work is kept and readable, but leaves the list and its requests become read-only.
          </p>
          <ConfirmButton
            label="Discard work"
            question={`Discard “${work.name}”?`}
            confirmLabel="Yes, discard"
            pending={toggle.isPending}
            onConfirm={() => toggle.mutate()}
          />
        </>
      )}
      {toggle.error && <ProblemAlert error={toggle.error} />}
    </Section>
  );
}

const statusOptions = [
  { value: 'all', label: 'All' },
  { value: 'pending', label: 'Pending' },
  { value: 'confirmed', label: 'Confirmed' },
  { value: 'validated', label: 'Validated' },
  { value: 'cancelled', label: 'Cancelled' },
] as const satisfies readonly { value: RequestStatus | 'all'; label: string }[];

function RequestsSection({ tenantId, work }: { tenantId: string; work: Work }) {
  const [status, setStatus] = useState<RequestStatus | 'all'>('all');
  const requests = useRequests(tenantId, work.id, status);
  return (
    <Section title="Requests" id="requests">
      <div className="filter">
        <SelectField label="Status" value={status} options={statusOptions} onChange={setStatus} />
      </div>
      <PagedList
        query={requests}
        noun="requests"
        empty={status === 'all' ? 'No requests yet.' : `No ${status} requests.`}
      >
        {(nodes) => <RequestRows tenantId={tenantId} requests={nodes} />}
      </PagedList>
      {!work.discardedAt && <SendRequest tenantId={tenantId} workId={work.id} />}
      {!work.discardedAt && <BulkSend tenantId={tenantId} workId={work.id} />}
    </Section>
  );
}

function SendRequest({ tenantId, workId }: { tenantId: string; workId: string }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const { form, bind } = useFormState({ title: '', message: '', email: '', firstName: '', lastName: '', due: '' });
  const create = useCreate(
    (body: ReturnType<typeof requestBody>, key) =>
      withTag(
        api.createRequest({
          params: { path: { tenant_id: tenantId, work_id: workId }, header: { 'Idempotency-Key': key } },
          body,
        }),
      ),
    ({ data, etag }) => {
      queryClient.setQueryData(keys.request(tenantId, workId, data.request.id), { request: data.request, etag });
      void queryClient.invalidateQueries({ queryKey: keys.requests(tenantId, workId) });
      navigate(`/tenants/${tenantId}/works/${workId}/requests/${data.request.id}`);
    },
  );
  const errors = fieldErrors(create.error);
  return (
    <SubForm title="Send a request" onSubmit={() => create.submit(requestBody(form))}>
      <TextField label="Title" required {...bind('title')} error={errors.title} />
      <TextArea label="Message" {...bind('message')} error={errors.message} hint="Optional" />
      <TextField label="Recipient email" type="email" required {...bind('email')} error={errors['recipient.email']} />
      <div className="field-row">
        <TextField label="Recipient first name" {...bind('firstName')} error={errors['recipient.firstName']} />
        <TextField label="Recipient last name" {...bind('lastName')} error={errors['recipient.lastName']} />
      </div>
      <TextField
        label="Due"
        type="datetime-local"
        {...bind('due')}
        error={errors.dueAt}
        hint="Optional, in your time zone"
      />
      <SubmitButton pending={create.isPending} label="Send request" pendingLabel="Sending…" />
      {create.error && (
        <ProblemAlert
          error={create.error}
          shownFields={['title', 'message', 'recipient.email', 'recipient.firstName', 'recipient.lastName', 'dueAt']}
        />
      )}
    </SubForm>
  );
}

/** The form as the contract's CreateRequestBody: empty optional fields left out, the due time as ISO 8601 UTC. */
function requestBody(form: {
  title: string;
  message: string;
  email: string;
  firstName: string;
  lastName: string;
  due: string;
}) {
  return {
    title: form.title,
    ...(form.message ? { message: form.message } : {}),
    recipient: {
      email: form.email,
      ...(form.firstName ? { firstName: form.firstName } : {}),
      ...(form.lastName ? { lastName: form.lastName } : {}),
    },
    ...(form.due ? { dueAt: new Date(form.due).toISOString() } : {}),
  };
}
