import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useSession } from '../api/auth';
import { dataOf } from '../api/problems';
import { keys, useApiKeys, useTenant, useTenants } from '../api/queries';
import type { ApiKey } from '../api/types';
import { ConfirmButton } from '../components/confirm';
import { formatTime } from '../components/format';
import { PagedList } from '../components/lists';
import { Page, Section } from '../components/page';
import { ProblemAlert } from '../components/problem';
import { CreateKey } from './create-api-key';

/**
 * Tenant names by id, from the pages of the tenants list loaded so far (undefined while the first one loads; empty
 * if it failed, so that each row reads its own tenants).
 */
type TenantNames = ReadonlyMap<string, string> | undefined;

export function ApiKeysPage() {
  const keysQuery = useApiKeys();
  const tenantsQuery = useTenants();
  const names: TenantNames = tenantsQuery.data
    ? new Map(tenantsQuery.data.pages.flatMap((page) => page.edges.map(({ node }) => [node.id, node.name] as const)))
    : tenantsQuery.isError
      ? new Map<string, string>()
      : undefined;
  return (
    <Page title="API keys">
      <div className="columns">
        <Section title="Your keys" id="keys">
          <PagedList query={keysQuery} noun="keys" empty="No API keys.">
            {(nodes) => (
              <ul className="rows">
                {nodes.map((key) => (
                  <KeyRow key={key.id} apiKey={key} names={names} />
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

function KeyRow({ apiKey, names }: { apiKey: ApiKey; names: TenantNames }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => dataOf(api.revokeApiKey({ params: { path: { api_key_id: apiKey.id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.apiKeys }),
  });
  const expired = apiKey.expiresAt !== null && Date.parse(apiKey.expiresAt) <= Date.now();
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
          <>
            {expired && <span className="badge badge-danger">expired</span>}
            <ConfirmButton
              label="Revoke"
              question={`Revoke “${apiKey.name}”? Integrations using it stop working at once.`}
              confirmLabel="Yes, revoke"
              pending={revoke.isPending}
              onConfirm={() => revoke.mutate()}
            />
          </>
        )}
      </span>
      <dl className="key-facts">
        <div>
          <dt>Tenants</dt>
          <dd>{apiKey.tenants === null ? 'all tenants' : <TenantList ids={apiKey.tenants} names={names} />}</dd>
        </div>
        <div>
          <dt>Scopes</dt>
          <dd>
            {apiKey.scopes === null
              ? 'full access'
              : apiKey.scopes.map((scope, index) => (
                  <span key={scope}>
                    {index > 0 && ', '}
                    <code>{scope}</code>
                  </span>
                ))}
          </dd>
        </div>
        <div>
          <dt>{expired ? 'Expired' : 'Expires'}</dt>
          <dd>
            {apiKey.expiresAt === null ? (
              'never'
            ) : (
              <time dateTime={apiKey.expiresAt}>{formatTime(apiKey.expiresAt)}</time>
            )}
          </dd>
        </div>
      </dl>
      {revoke.error && <ProblemAlert error={revoke.error} />}
    </li>
  );
}

function TenantList({ ids, names }: { ids: readonly string[]; names: TenantNames }) {
  if (!names) return <>…</>;
  return (
    <>
      {ids.map((id, index) => (
        <span key={id}>
          {index > 0 && ', '}
          {names.get(id) ?? <UnlistedTenant id={id} />}
        </span>
      ))}
    </>
  );
}

/** A tenant of the key not on the loaded pages of the list: read on its own; gone (404) once its user left it. */
function UnlistedTenant({ id }: { id: string }) {
  const tenant = useTenant(id);
  if (tenant.data) return <>{tenant.data.tenant.name}</>;
  if (tenant.isError) return <span className="muted">a tenant you are no longer in</span>;
  return <>…</>;
}
