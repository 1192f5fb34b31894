import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { useSession } from '../api/auth';
import { useCreate } from '../api/mutations';
import { dataOf, fieldErrors } from '../api/problems';
import { keys, useApiKeys } from '../api/queries';
import type { ApiKey, CreatedApiKey } from '../api/types';
import { ConfirmButton } from '../components/confirm';
import { SubmitButton, TextField } from '../components/fields';
import { formatTime } from '../components/format';
import { PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { ProblemAlert } from '../components/problem';

export function ApiKeysPage() {
  const keysQuery = useApiKeys();
  return (
    <Page title="API keys">
      <div className="columns">
        <Section title="Your keys" id="keys">
          <PagedList query={keysQuery} noun="keys" empty="No API keys.">
            {(nodes) => (
              <ul className="rows">
                {nodes.map((key) => (
                  <KeyRow key={key.id} apiKey={key} />
                ))}
              </ul>
            )}
          </PagedList>
        </Section>
        <CreateKey />
      </div>
    </Page>
  );
}

function KeyRow({ apiKey }: { apiKey: ApiKey }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => dataOf(api.revokeApiKey({ params: { path: { api_key_id: apiKey.id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.apiKeys }),
  });
  return (
    <li className="row">
      <span className="row-title">{apiKey.name}</span>
      <span className="muted">
        <code>{apiKey.prefix}…</code> · created {formatTime(apiKey.createdAt)} ·{' '}
        {apiKey.lastUsedAt ? `last used ${formatTime(apiKey.lastUsedAt)}` : 'never used'}
      </span>
      <span className="row-meta">
        {apiKey.revokedAt ? (
          <span className="badge badge-muted">revoked {formatTime(apiKey.revokedAt)}</span>
        ) : (
          <ConfirmButton
            label="Revoke"
            question={`Revoke “${apiKey.name}”? Integrations using it stop working at once.`}
            confirmLabel="Yes, revoke"
            pending={revoke.isPending}
            onConfirm={() => revoke.mutate()}
          />
        )}
      </span>
      {revoke.error && <ProblemAlert error={revoke.error} />}
    </li>
  );
}

function CreateKey() {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const create = useCreate(
    (body: { name: string }, key) => dataOf(api.createApiKey({ body, params: { header: { 'Idempotency-Key': key } } })),
    ({ apiKey }) => {
      setCreated(apiKey);
      setName('');
      void queryClient.invalidateQueries({ queryKey: keys.apiKeys });
    },
  );
  const errors = fieldErrors(create.error);
  return (
    <Section title="Create a key" id="create-key">
      {created && <NewSecret apiKey={created} onDone={() => setCreated(null)} />}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.submit({ name });
        }}
      >
        <TextField
          label="Key name"
          required
          value={name}
          onChange={(event) => setName(event.target.value)}
          error={errors.name}
          hint="What it is for, e.g. “CI” or “Sync job”"
        />
        <SubmitButton pending={create.isPending} label="Create key" pendingLabel="Creating…" />
      </form>
      {create.error && <ProblemAlert error={create.error} shownFields={['name']} />}
    </Section>
  );
}

/** The secret, once: it is in this response only and kept nowhere but this component's state. */
function NewSecret({ apiKey, onDone }: { apiKey: CreatedApiKey; onDone: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(apiKey.secret);
      setCopied('yes');
    } catch {
      // No clipboard (an insecure origin, or permission refused): select it, so Ctrl+C / ⌘C copies it.
      field.current?.select();
      setCopied('failed');
    }
  };
  return (
    <div className="alert alert-warning secret" role="alert">
      <p className="alert-title">Copy the new key “{apiKey.name}” now</p>
      <p>This is the only time it is shown. Keep it somewhere safe; if you lose it, revoke it and create another.</p>
      <label htmlFor="new-secret">Secret</label>
      <div className="secret-row">
        <input
          id="new-secret"
          ref={field}
          readOnly
          value={apiKey.secret}
          spellCheck={false}
          onFocus={(event) => event.target.select()}
        />
        <button type="button" className="button button-primary" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p aria-live="polite" className="muted">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'Could not copy: the key is selected, copy it with Ctrl+C or ⌘C.'
            : ''}
      </p>
      <button type="button" className="button" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}
