import type { components, operations } from '@works-api/client';

/**
 * The API's data, named for the console. Every type comes from the contract through the client: a change to
 * openapi/api.yaml changes these and breaks the console's compile wherever it matters.
 */
type Schemas = components['schemas'];

export type User = Schemas['User'];
export type UserRecord = Schemas['UserRecord'];
export type Role = Schemas['Role'];
export type Tenant = Schemas['Tenant'];
export type Member = Schemas['Member'];
export type Invitation = Schemas['Invitation'];
export type Work = Schemas['Work'];
export type Request = Schemas['Request'];
export type RequestStatus = Schemas['RequestStatus'];
export type RequestAction = Schemas['RequestAction'];
export type RequestEvent = Schemas['RequestEvent'];
export type ApiKey = Schemas['ApiKey'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type CreateApiKeyBody = Schemas['CreateApiKeyBody'];
export type Scope = Schemas['Scope'];
export type SessionInfo = Schemas['Session'];
export type PageInfo = Schemas['PageInfo'];
export type TenantEvent = Schemas['WebhookEvent'];

/** The values of the works list's `discarded` filter, as the contract spells them. */
export type DiscardedFilter = NonNullable<NonNullable<operations['listWorks']['parameters']['query']>['discarded']>;
