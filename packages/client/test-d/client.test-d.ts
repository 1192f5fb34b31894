// Type-level tests: this file must compile, and every line under `@ts-expect-error` must fail to (tsc reports an
// unused `@ts-expect-error` as an error). It checks the built declarations in dist/, as a partner would see them.
import { expectTypeOf } from 'expect-type';
import {
  type components,
  createClient,
  type OperationResult,
  type Problem,
  ProblemError,
  unwrap,
  type WorksApiClient,
} from '@works-api/client';

type Schemas = components['schemas'];
const client: WorksApiClient = createClient({ baseUrl: 'https://api.example.com', apiKey: 'wk_example' });
const path = { tenant_id: 't1', work_id: 'w1', id: 'r1' };

export async function resultsAreTyped() {
  const created = await client.createTenant({ body: { name: 'Acme Research' } });
  if (created.data) expectTypeOf(created.data.tenant).toEqualTypeOf<Schemas['Tenant']>();
  else expectTypeOf(created.error).toEqualTypeOf<Problem>();
  expectTypeOf(created.response).toEqualTypeOf<Response>();

  const confirmed = await client.confirmRequest({ params: { path }, body: { answer: 'Yes' } });
  if (confirmed.data) expectTypeOf(confirmed.data).toEqualTypeOf<Schemas['Request']>();

  const works = unwrap(await client.listWorks({ params: { path: { tenant_id: 't1' }, query: { discarded: 'all', limit: 50 } } }));
  expectTypeOf(works.works.edges[0]!.node).toEqualTypeOf<Schemas['Work']>();

  // The generic openapi-fetch methods keep their types too.
  const me = await client.GET('/me');
  if (me.data) expectTypeOf(me.data.user.email).toEqualTypeOf<string>();
  expectTypeOf<OperationResult<'getMe'>['data']>().toEqualTypeOf<{ user: Schemas['User'] } | undefined>();

  const error = new ProblemError({ type: 'about:blank', title: 'x', status: 409, detail: 'x', instance: '/', code: 'x' });
  expectTypeOf(error.problem).toEqualTypeOf<Problem>();
  expectTypeOf(error.code).toEqualTypeOf<string>();

  // Operations without a required option can be called bare.
  await client.getMe();
  await client.listTenants();
  await client.cancelRequest({ params: { path } });
}

export async function wrongBodiesDoNotCompile() {
  // @ts-expect-error: the body is required
  await client.createTenant();
  // @ts-expect-error: `name` is required
  await client.createTenant({ body: {} });
  // @ts-expect-error: `name` is a string
  await client.createTenant({ body: { name: 42 } });
  // @ts-expect-error: undeclared body properties are rejected, as the server does
  await client.createTenant({ body: { name: 'Acme', colour: 'red' } });
  // @ts-expect-error: `role` is one of owner, admin, member
  await client.addMember({ params: { path: { tenant_id: 't1' } }, body: { email: 'a@example.com', role: 'guest' } });
  // @ts-expect-error: `recipient.email` is required
  await client.createRequest({ params: { path }, body: { title: 'Figures', recipient: { firstName: 'Grace' } } });
  // @ts-expect-error: the generic POST checks bodies as well
  await client.POST('/tenants', { body: { title: 'Acme' } });
}

export async function wrongPathsAndParametersDoNotCompile() {
  // @ts-expect-error: path parameters are required
  await client.getTenant();
  // @ts-expect-error: the path parameter is `tenant_id`
  await client.getTenant({ params: { path: { tenantId: 't1' } } });
  // @ts-expect-error: `work_id` is missing
  await client.getWork({ params: { path: { tenant_id: 't1' } } });
  // @ts-expect-error: `status` is a request status
  await client.listRequests({ params: { path, query: { status: 'done' } } });
  // @ts-expect-error: `limit` is a number
  await client.listTenants({ params: { query: { limit: '10' } } });
  // @ts-expect-error: no such operation
  await client.deleteTenant({ params: { path: { tenant_id: 't1' } } });
  // @ts-expect-error: no such path
  await client.GET('/tenant');
  // @ts-expect-error: no such method on this path
  await client.PUT('/tenants', { body: { name: 'Acme' } });
  // @ts-expect-error: unknown options are rejected by operation methods
  await client.getMe({ retries: 3 });
}

// @ts-expect-error: baseUrl is required
createClient({ apiKey: 'wk_example' });
// @ts-expect-error: retry options are checked
createClient({ baseUrl: 'https://api.example.com', retry: { attempts: 3 } });
