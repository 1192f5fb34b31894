// The ESM entry (dist/index.mjs and index.d.mts) exposes the same typed client as the CommonJS one.
import { expectTypeOf } from 'expect-type';
import { createClient, type OperationProblem, unwrap } from '@works-api/client';

const client = createClient({ baseUrl: 'https://api.example.com', apiKey: 'wk_example' });
const me = await client.getMe();
if (me.error) expectTypeOf(me.error.code).toEqualTypeOf<OperationProblem<'getMe'>['code']>();
expectTypeOf(unwrap(me).user.email).toEqualTypeOf<string>();
// @ts-expect-error: the body is required
await client.createTenant();
