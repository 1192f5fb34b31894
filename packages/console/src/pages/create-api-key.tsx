import { useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { useSession } from '../api/auth';
import { useCreate } from '../api/mutations';
import { dataOf, fieldErrors } from '../api/problems';
import { keys, useTenants } from '../api/queries';
import { inContractOrder, NOT_WITH_TENANTS, type ScopeChoice, scopeGroups, UNRESTRICTED_ONLY } from '../api/scopes';
import type { CreateApiKeyBody, CreatedApiKey, Scope } from '../api/types';
import { FieldGroup, SubmitButton, TextField } from '../components/fields';
import { PagedList } from '../components/lists';
import { Section } from '../components/page';
import { ProblemAlert } from '../components/problem';

type Reach = 'all' | 'chosen';

/** A date input's value (`YYYY-MM-DD`) for a day in the browser's time zone. */
const dayValue = (date: Date): string =>
  [date.getFullYear(), date.getMonth() + 1, date.getDate()].map((n) => String(n).padStart(2, '0')).join('-');

const daysFromToday = (days: number): string => {
  const day = new Date();
  day.setDate(day.getDate() + days);
  return dayValue(day);
};

/**
 * The instant a key picked to expire "on" a day stops working: the end of that day (23:59:59.999) in the browser's
 * time zone, so it works all through the day the person chose, wherever they are. Latest pick: 365 days from today,
 * whose end is always less than the contract's 366 days ahead.
 */
const endOfDay = (value: string): Date => {
  const [year, month, day] = value.split('-').map(Number) as [number, number, number];
  return new Date(year, month - 1, day, 23, 59, 59, 999);
};

const EXPIRY_PRESETS = [
  { label: '30 days', days: 30 },
  { label: '90 days', days: 90 },
  { label: 'A year', days: 365 },
] as const;

/** The body's fields whose problems the form shows beside them. */
const FORM_FIELDS = ['name', 'tenants', 'scopes', 'expiresAt'];

/**
 * "Create a key" on the API keys page: a name, the tenants it reaches, its scopes and its expiry (each optional:
 * a key with none of them acts as its user, everywhere, until revoked), then the secret, once.
 */
export function CreateKey() {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const formId = useId();
  const [name, setName] = useState('');
  const [reach, setReach] = useState<Reach>('all');
  const [tenantIds, setTenantIds] = useState<string[]>([]);
  const [scopeReach, setScopeReach] = useState<Reach>('all');
  const [picked, setPicked] = useState<Scope[]>([]);
  // '' is "does not expire".
  const [expiresOn, setExpiresOn] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const create = useCreate(
    (body: CreateApiKeyBody, key) => dataOf(api.createApiKey({ body, params: { header: { 'Idempotency-Key': key } } })),
    ({ apiKey }) => {
      setCreated(apiKey);
      setName('');
      setReach('all');
      setTenantIds([]);
      setScopeReach('all');
      setPicked([]);
      setExpiresOn('');
      void queryClient.invalidateQueries({ queryKey: keys.apiKeys });
    },
  );
  const errors = fieldErrors(create.error);
  // An item's error (`/body/scopes/2`) is shown with its list.
  const errorFor = (field: string): string | undefined =>
    errors[field] ?? Object.entries(errors).find(([path]) => path.startsWith(`${field}.`))?.[1];
  const today = daysFromToday(0);
  const latest = daysFromToday(365);
  const limitedToTenants = reach === 'chosen';

  const body = (): CreateApiKeyBody => ({
    name,
    // Nothing chosen is sent as it is: the server's "at least one" appears beside the list.
    ...(limitedToTenants && { tenants: tenantIds }),
    ...(scopeReach === 'chosen' && {
      scopes: inContractOrder(limitedToTenants ? picked.filter((scope) => scope !== NOT_WITH_TENANTS) : picked),
    }),
    ...(expiresOn !== '' && { expiresAt: endOfDay(expiresOn).toISOString() }),
  });

  return (
    <Section title="Create a key" id="create-key">
      {created && <NewSecret apiKey={created} onDone={() => setCreated(null)} />}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.submit(body());
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

        <FieldGroup
          legend="Access"
          hint="Other tenants do not exist for the key (404, as for a non-member)."
          error={errorFor('tenants')}
        >
          <label className="check">
            <input type="radio" name={`${formId}-reach`} checked={reach === 'all'} onChange={() => setReach('all')} />
            All your tenants, now and later
          </label>
          <label className="check">
            <input
              type="radio"
              name={`${formId}-reach`}
              checked={reach === 'chosen'}
              onChange={() => setReach('chosen')}
            />
            Only the tenants chosen below
          </label>
          {limitedToTenants && <TenantChoices chosen={tenantIds} onChange={setTenantIds} />}
        </FieldGroup>

        <FieldGroup
          legend="Scopes"
          hint={
            <>
              Either way the key never does more than your role allows in the tenant. A key limited to some tenants or
              scopes never manages API keys, invitations or sessions (<code>{UNRESTRICTED_ONLY}</code>).
            </>
          }
          error={errorFor('scopes')}
        >
          <label className="check">
            <input
              type="radio"
              name={`${formId}-scopes`}
              checked={scopeReach === 'all'}
              onChange={() => setScopeReach('all')}
            />
            Everything your role allows (full access)
          </label>
          <label className="check">
            <input
              type="radio"
              name={`${formId}-scopes`}
              checked={scopeReach === 'chosen'}
              onChange={() => setScopeReach('chosen')}
            />
            Only the scopes chosen below
          </label>
          {scopeReach === 'chosen' && (
            <div className="scope-groups">
              {scopeGroups.map((group) => (
                <fieldset key={group.resource} className="scope-group">
                  <legend>{group.label}</legend>
                  {group.choices.map((choice) => (
                    <ScopeBox
                      key={choice.scope}
                      choice={choice}
                      checked={picked.includes(choice.scope)}
                      onChange={(checked) =>
                        setPicked((current) =>
                          checked ? [...current, choice.scope] : current.filter((scope) => scope !== choice.scope),
                        )
                      }
                      unavailable={
                        limitedToTenants && choice.scope === NOT_WITH_TENANTS
                          ? 'not with chosen tenants: what the key created would be out of its reach'
                          : undefined
                      }
                    />
                  ))}
                </fieldset>
              ))}
            </div>
          )}
        </FieldGroup>

        <FieldGroup legend="Expiry">
          <div className="button-row" role="group" aria-label="Expire in">
            <button type="button" className="button" aria-pressed={expiresOn === ''} onClick={() => setExpiresOn('')}>
              Never
            </button>
            {EXPIRY_PRESETS.map((preset) => {
              const value = daysFromToday(preset.days);
              return (
                <button
                  key={preset.days}
                  type="button"
                  className="button"
                  aria-pressed={expiresOn === value}
                  onClick={() => setExpiresOn(value)}
                >
                  {preset.label}
                </button>
              );
            })}
          </div>
          <TextField
            label="Expires on"
            type="date"
            min={today}
            max={latest}
            value={expiresOn}
            onChange={(event) => setExpiresOn(event.target.value)}
            error={errors.expiresAt}
            hint="Empty: it never expires. It stops working at the end of that day (your time zone), at most a year ahead."
          />
        </FieldGroup>

        <SubmitButton pending={create.isPending} label="Create key" pendingLabel="Creating…" />
      </form>
      {create.error && (
        <ProblemAlert
          error={create.error}
          shownFields={Object.keys(errors).filter((path) => FORM_FIELDS.includes(path.split('.')[0]!))}
        />
      )}
    </Section>
  );
}

/** The caller's tenants, to tick: every page of the list can be loaded ("Show more tenants"). */
function TenantChoices({ chosen, onChange }: { chosen: string[]; onChange: (ids: string[]) => void }) {
  const tenants = useTenants();
  return (
    <fieldset className="scope-group">
      <legend>Your tenants</legend>
      <PagedList query={tenants} noun="tenants" empty="You are not a member of any tenant yet.">
        {(nodes) => (
          <div className="check-list">
            {nodes.map((tenant) => (
              <label key={tenant.id} className="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(tenant.id)}
                  onChange={(event) =>
                    onChange(event.target.checked ? [...chosen, tenant.id] : chosen.filter((id) => id !== tenant.id))
                  }
                />
                {tenant.name}
              </label>
            ))}
          </div>
        )}
      </PagedList>
    </fieldset>
  );
}

/** One scope: its name as the contract spells it, and the operations it opens. */
function ScopeBox({
  choice,
  checked,
  onChange,
  unavailable,
}: {
  choice: ScopeChoice;
  checked: boolean;
  onChange: (checked: boolean) => void;
  /** Why it cannot be picked now. */
  unavailable: string | undefined;
}) {
  const id = useId();
  return (
    <div className="scope-choice">
      <label className="check">
        <input
          type="checkbox"
          checked={checked && !unavailable}
          disabled={unavailable !== undefined}
          aria-describedby={`${id}-operations`}
          onChange={(event) => onChange(event.target.checked)}
        />
        <code>{choice.scope}</code>
      </label>
      <p className="hint" id={`${id}-operations`}>
        {unavailable ?? choice.operations.join(', ')}
      </p>
    </div>
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
