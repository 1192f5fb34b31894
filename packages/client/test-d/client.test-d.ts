// Type-level tests: this file must compile, and every line under `@ts-expect-error` must fail to (tsc reports an
// unused `@ts-expect-error` as an error). It checks the built declarations in dist/, as a partner would see them.
import { expectTypeOf } from 'expect-type';
import {
  type AnyProblem,
  type components,
  createClient,
  type OperationProblem,
  type OperationResult,
  type ProblemCode,
  ProblemError,
  requiredScopes,
  type Scope,
  scopes,
  unwrap,
  type WorksApiClient,
} from '@works-api/client';

type Schemas = components['schemas'];
const client: WorksApiClient = createClient({ baseUrl: 'https://api.example.com', apiKey: 'wk_example' });
const path = { tenant_id: 't1', work_id: 'w1', id: 'r1' };

export async function resultsAreTyped() {
  const created = await client.createTenant({ body: { name: 'Acme Research' } });
  if (created.data) expectTypeOf(created.data.tenant).toEqualTypeOf<Schemas['Tenant']>();
  else expectTypeOf(created.error).toEqualTypeOf<OperationProblem<'createTenant'>>();
  expectTypeOf(created.response).toEqualTypeOf<Response>();

  const confirmed = await client.confirmRequest({ params: { path }, body: { answer: 'Yes' } });
  if (confirmed.data) expectTypeOf(confirmed.data).toEqualTypeOf<Schemas['Request']>();

  const works = unwrap(
    await client.listWorks({ params: { path: { tenant_id: 't1' }, query: { discarded: 'all', limit: 50 } } }),
  );
  expectTypeOf(works.works.edges[0]!.node).toEqualTypeOf<Schemas['Work']>();

  // The generic openapi-fetch methods keep their types too.
  const me = await client.GET('/me');
  if (me.data) expectTypeOf(me.data.user.email).toEqualTypeOf<string>();
  expectTypeOf<OperationResult<'getMe'>['data']>().toEqualTypeOf<{ user: Schemas['User'] } | undefined>();

  const error = new ProblemError({
    type: 'about:blank',
    title: 'x',
    status: 409,
    detail: 'x',
    instance: '/',
    code: 'last_owner',
  });
  expectTypeOf(error.problem).toEqualTypeOf<AnyProblem>();
  expectTypeOf(error.code).toEqualTypeOf<ProblemCode>();

  // Operations without a required option can be called bare.
  await client.getMe();
  await client.listTenants();
  await client.cancelRequest({ params: { path } });
}

export async function errorsAreAClosedUnionOnCode() {
  const result = await client.validateRequest({ params: { path } });
  if (!result.error) return;
  // Exactly the codes the contract declares for validateRequest, and the client's own for non-problem answers.
  expectTypeOf(result.error.code).toEqualTypeOf<
    | 'validation_failed'
    | 'malformed_json'
    | 'malformed_request'
    | 'unauthenticated'
    | 'insufficient_scope'
    | 'not_found'
    | 'invalid_transition'
    | 'work_discarded'
    | 'precondition_failed'
    | 'payload_too_large'
    | 'unsupported_media_type'
    | 'rate_limited'
    | 'headers_too_large'
    | 'internal_error'
    | 'service_unavailable'
    | 'unexpected_response'
  >();
  switch (result.error.code) {
    case 'invalid_transition':
      // Required on this member: no `?.`, no undefined.
      expectTypeOf(result.error.currentStatus).toEqualTypeOf<Schemas['RequestStatus']>();
      expectTypeOf(result.error.allowedActions).toEqualTypeOf<Schemas['RequestAction'][]>();
      expectTypeOf(result.error.status).toEqualTypeOf<409>();
      break;
    case 'validation_failed':
      expectTypeOf(result.error.errors).toEqualTypeOf<Array<{ path: string; message: string }>>();
      break;
    case 'internal_error':
      expectTypeOf(result.error.requestId).toEqualTypeOf<string>();
      break;
    case 'insufficient_scope':
      // The scope the key lacks: one of the contract's closed set.
      expectTypeOf(result.error.scope).toEqualTypeOf<Scope>();
      expectTypeOf(result.error.status).toEqualTypeOf<403>();
      break;
    case 'not_found':
      // Other members still carry the optional fields of every problem, without promising them.
      expectTypeOf(result.error.currentStatus).toEqualTypeOf<Schemas['RequestStatus'] | undefined>();
      break;
    // @ts-expect-error: a misspelt code does not compile
    case 'not_fuond':
      break;
    // @ts-expect-error: last_owner is not among validateRequest's codes
    case 'last_owner':
      break;
  }
  // @ts-expect-error: outside a narrowing, `currentStatus` may be absent
  expectTypeOf(result.error.currentStatus).toEqualTypeOf<Schemas['RequestStatus']>();

  const members = await client.removeMember({ params: { path: { tenant_id: 't1', user_id: 'u1' } } });
  if (members.error?.code === 'last_owner') expectTypeOf(members.error.status).toEqualTypeOf<409>();

  try {
    unwrap(await client.getMe());
  } catch (thrown) {
    // @ts-expect-error: ProblemError's code is a closed set too
    if (thrown instanceof ProblemError && thrown.code === 'not_fuond') return;
  }
}

export async function paginateIsTypedFromTheSpec() {
  // Every list operation, its node type exact.
  for await (const work of client.paginate('listWorks', {
    params: { path: { tenant_id: 't1' }, query: { discarded: 'all' } },
  })) {
    expectTypeOf(work).toEqualTypeOf<Schemas['Work']>();
  }
  for await (const tenant of client.paginate('listTenants')) expectTypeOf(tenant).toEqualTypeOf<Schemas['Tenant']>();
  for await (const key of client.paginate('listApiKeys', { pageSize: 10, limit: 25 }))
    expectTypeOf(key).toEqualTypeOf<Schemas['ApiKey']>();
  for await (const member of client.paginate('listMembers', { params: { path: { tenant_id: 't1' } } })) {
    expectTypeOf(member).toEqualTypeOf<Schemas['Member']>();
  }
  for await (const request of client.paginate('listRequests', { params: { path, query: { status: 'pending' } } })) {
    expectTypeOf(request).toEqualTypeOf<Schemas['Request']>();
  }
  for await (const event of client.paginate('listRequestEvents', {
    params: { path },
    signal: AbortSignal.timeout(5000),
  })) {
    expectTypeOf(event).toEqualTypeOf<Schemas['RequestEvent']>();
  }

  // @ts-expect-error: only list operations can be paginated
  client.paginate('getWork', { params: { path } });
  // @ts-expect-error: nor can operations that do not exist
  client.paginate('listEverything');
  // @ts-expect-error: path parameters are required when the list has them
  client.paginate('listWorks');
  // @ts-expect-error: paginate sets the cursor itself
  client.paginate('listWorks', { params: { path: { tenant_id: 't1' }, query: { after: 'x' } } });
  // @ts-expect-error: and the page size, which is `pageSize`
  client.paginate('listTenants', { params: { query: { limit: 10 } } });
  // @ts-expect-error: the list's own query parameters are checked
  client.paginate('listWorks', { params: { path: { tenant_id: 't1' }, query: { discarded: 'maybe' } } });
  // @ts-expect-error: unknown options are rejected
  client.paginate('listTenants', { pages: 2 });
}

export async function aCursorMayBeUndefined(cursor: string | undefined) {
  // Under exactOptionalPropertyTypes (on in this tsconfig), an optional query parameter still takes `undefined`.
  const page = unwrap(
    await client.listWorks({ params: { path: { tenant_id: 't1' }, query: { after: cursor, limit: undefined } } }),
  );
  await client.listWorks({
    params: { path: { tenant_id: 't1' }, query: { after: page.works.pageInfo.endCursor ?? undefined } },
  });
  // @ts-expect-error: null is not undefined
  await client.listWorks({ params: { path: { tenant_id: 't1' }, query: { after: page.works.pageInfo.endCursor } } });
  // @ts-expect-error: required path parameters still are
  await client.listWorks({ params: { path: { tenant_id: undefined } } });
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

export function scopesAreTyped() {
  expectTypeOf(requiredScopes.createWork).toEqualTypeOf<'works:write'>();
  expectTypeOf<(typeof scopes)[number]>().toEqualTypeOf<Scope>();
  // @ts-expect-error: the operator's operations take no API key, so they need no scope
  void requiredScopes.adminCreateUser;
  const body: Schemas['CreateApiKeyBody'] = { name: 'Accounting', tenants: ['t1'], scopes: ['works:read'] };
  // @ts-expect-error: a scope outside the closed set does not compile
  const misspelt: Schemas['CreateApiKeyBody'] = { name: 'x', scopes: ['works:raed'] };
  return [body, misspelt];
}
