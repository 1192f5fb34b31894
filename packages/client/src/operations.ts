// Generated from openapi/api.yaml by scripts/generate-operations.mjs: do not edit. `pnpm generate` rewrites it.

import type { components } from '@works-api/api-types';

type Schemas = components['schemas'];

/**
 * The request lifecycle: the actions each status allows (the contract's `x-allowed-actions` on RequestStatus);
 * any other action is `409 invalid_transition`.
 */
export const allowedActionsByStatus = {
  pending: ['confirm', 'early_validate', 'cancel'],
  confirmed: ['validate', 'early_validate', 'cancel'],
  validated: [],
  cancelled: [],
} as const satisfies Record<Schemas['RequestStatus'], readonly Schemas['RequestAction'][]>;

/** Every scope an API key may hold (the contract's `Scope`), in the contract's order. */
export const scopes = ['account:read', 'account:manage', 'tenants:read', 'tenants:create', 'tenants:write', 'members:read', 'members:write', 'works:read', 'works:write', 'requests:read', 'requests:write', 'requests:act', 'webhooks:read', 'webhooks:write', 'events:read'] as const satisfies readonly Schemas['Scope'][];

/**
 * The one scope each operation needs from an API key (its `x-required-scope`): a key without it gets `403
 * insufficient_scope`. The operator's and the recipient's operations take no API key and are not listed.
 */
export const requiredScopes = {
  getMe: 'account:read',
  listApiKeys: 'account:manage',
  createApiKey: 'account:manage',
  revokeApiKey: 'account:manage',
  listSessions: 'account:manage',
  revokeAllSessions: 'account:manage',
  revokeSession: 'account:manage',
  listTenants: 'tenants:read',
  createTenant: 'tenants:create',
  getTenant: 'tenants:read',
  updateTenant: 'tenants:write',
  listMembers: 'members:read',
  addMember: 'members:write',
  getMember: 'members:read',
  removeMember: 'members:write',
  updateMember: 'members:write',
  listInvitations: 'members:read',
  deleteInvitation: 'members:write',
  listMyInvitations: 'account:manage',
  acceptInvitation: 'account:manage',
  declineInvitation: 'account:manage',
  listWorks: 'works:read',
  createWork: 'works:write',
  getWork: 'works:read',
  discardWork: 'works:write',
  updateWork: 'works:write',
  undiscardWork: 'works:write',
  listTenantRequests: 'requests:read',
  listRequests: 'requests:read',
  createRequest: 'requests:write',
  createRequestBatch: 'requests:write',
  getRequest: 'requests:read',
  listRequestEvents: 'requests:read',
  cancelRequest: 'requests:act',
  confirmRequest: 'requests:act',
  earlyValidateRequest: 'requests:act',
  validateRequest: 'requests:act',
  resendRequest: 'requests:write',
  listEvents: 'events:read',
  listWebhookEndpoints: 'webhooks:read',
  createWebhookEndpoint: 'webhooks:write',
  getWebhookEndpoint: 'webhooks:read',
  deleteWebhookEndpoint: 'webhooks:write',
  updateWebhookEndpoint: 'webhooks:write',
  rotateWebhookEndpointSecret: 'webhooks:write',
  testWebhookEndpoint: 'webhooks:write',
  listWebhookDeliveries: 'webhooks:read',
  retryWebhookDelivery: 'webhooks:write',
} as const satisfies Record<string, Schemas['Scope']>;

/**
 * Every operation of the contract: its method, its path, whether it creates something, and for a list the
 * property that holds its page (a Connection) and the largest `limit` it takes.
 */
export const operationRoutes = {
  adminCreateUser: { method: 'post', path: '/admin/users', creates: true },
  adminGetUser: { method: 'get', path: '/admin/users/{user_id}', creates: false },
  getMe: { method: 'get', path: '/me', creates: false },
  listApiKeys: { method: 'get', path: '/api-keys', creates: false, list: { connection: 'apiKeys', maxPageSize: 100 } },
  createApiKey: { method: 'post', path: '/api-keys', creates: true },
  revokeApiKey: { method: 'delete', path: '/api-keys/{api_key_id}', creates: false },
  createSignIn: { method: 'post', path: '/sessions/email', creates: false },
  createSession: { method: 'post', path: '/sessions', creates: true },
  listSessions: { method: 'get', path: '/me/sessions', creates: false, list: { connection: 'sessions', maxPageSize: 100 } },
  revokeAllSessions: { method: 'delete', path: '/me/sessions', creates: false },
  revokeSession: { method: 'delete', path: '/me/sessions/{session_id}', creates: false },
  listTenants: { method: 'get', path: '/tenants', creates: false, list: { connection: 'tenants', maxPageSize: 100 } },
  createTenant: { method: 'post', path: '/tenants', creates: true },
  getTenant: { method: 'get', path: '/tenants/{tenant_id}', creates: false },
  updateTenant: { method: 'patch', path: '/tenants/{tenant_id}', creates: false },
  listMembers: { method: 'get', path: '/tenants/{tenant_id}/members', creates: false, list: { connection: 'members', maxPageSize: 100 } },
  addMember: { method: 'post', path: '/tenants/{tenant_id}/members', creates: true },
  getMember: { method: 'get', path: '/tenants/{tenant_id}/members/{user_id}', creates: false },
  removeMember: { method: 'delete', path: '/tenants/{tenant_id}/members/{user_id}', creates: false },
  updateMember: { method: 'patch', path: '/tenants/{tenant_id}/members/{user_id}', creates: false },
  listInvitations: { method: 'get', path: '/tenants/{tenant_id}/invitations', creates: false, list: { connection: 'invitations', maxPageSize: 100 } },
  deleteInvitation: { method: 'delete', path: '/tenants/{tenant_id}/invitations/{invitation_id}', creates: false },
  listMyInvitations: { method: 'get', path: '/me/invitations', creates: false, list: { connection: 'invitations', maxPageSize: 100 } },
  acceptInvitation: { method: 'post', path: '/me/invitations/{invitation_id}/accept', creates: false },
  declineInvitation: { method: 'post', path: '/me/invitations/{invitation_id}/decline', creates: false },
  listWorks: { method: 'get', path: '/tenants/{tenant_id}/works', creates: false, list: { connection: 'works', maxPageSize: 100 } },
  createWork: { method: 'post', path: '/tenants/{tenant_id}/works', creates: true },
  getWork: { method: 'get', path: '/tenants/{tenant_id}/works/{work_id}', creates: false },
  discardWork: { method: 'delete', path: '/tenants/{tenant_id}/works/{work_id}', creates: false },
  updateWork: { method: 'patch', path: '/tenants/{tenant_id}/works/{work_id}', creates: false },
  undiscardWork: { method: 'put', path: '/tenants/{tenant_id}/works/{work_id}/undiscard', creates: false },
  listTenantRequests: { method: 'get', path: '/tenants/{tenant_id}/requests', creates: false, list: { connection: 'requests', maxPageSize: 100 } },
  listRequests: { method: 'get', path: '/tenants/{tenant_id}/works/{work_id}/requests', creates: false, list: { connection: 'requests', maxPageSize: 100 } },
  createRequest: { method: 'post', path: '/tenants/{tenant_id}/works/{work_id}/requests', creates: true },
  createRequestBatch: { method: 'post', path: '/tenants/{tenant_id}/works/{work_id}/request-batches', creates: true },
  getRequest: { method: 'get', path: '/tenants/{tenant_id}/works/{work_id}/requests/{id}', creates: false },
  listRequestEvents: { method: 'get', path: '/tenants/{tenant_id}/works/{work_id}/requests/{id}/events', creates: false, list: { connection: 'events', maxPageSize: 100 } },
  cancelRequest: { method: 'delete', path: '/tenants/{tenant_id}/works/{work_id}/requests/{id}/cancel', creates: false },
  confirmRequest: { method: 'put', path: '/tenants/{tenant_id}/works/{work_id}/requests/{id}/confirm', creates: false },
  earlyValidateRequest: { method: 'put', path: '/tenants/{tenant_id}/works/{work_id}/requests/{id}/early_validate', creates: false },
  validateRequest: { method: 'put', path: '/tenants/{tenant_id}/works/{work_id}/requests/{id}/validate', creates: false },
  resendRequest: { method: 'post', path: '/tenants/{tenant_id}/works/{work_id}/requests/{id}/resend', creates: false },
  listEvents: { method: 'get', path: '/tenants/{tenant_id}/events', creates: false, list: { connection: 'events', maxPageSize: 100 } },
  listWebhookEndpoints: { method: 'get', path: '/tenants/{tenant_id}/webhook-endpoints', creates: false, list: { connection: 'webhookEndpoints', maxPageSize: 100 } },
  createWebhookEndpoint: { method: 'post', path: '/tenants/{tenant_id}/webhook-endpoints', creates: true },
  getWebhookEndpoint: { method: 'get', path: '/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}', creates: false },
  deleteWebhookEndpoint: { method: 'delete', path: '/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}', creates: false },
  updateWebhookEndpoint: { method: 'patch', path: '/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}', creates: false },
  rotateWebhookEndpointSecret: { method: 'post', path: '/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/rotate-secret', creates: false },
  testWebhookEndpoint: { method: 'post', path: '/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/test', creates: false },
  listWebhookDeliveries: { method: 'get', path: '/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries', creates: false, list: { connection: 'deliveries', maxPageSize: 100 } },
  retryWebhookDelivery: { method: 'post', path: '/tenants/{tenant_id}/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry', creates: false },
  getRecipientRequest: { method: 'get', path: '/recipient/request', creates: false },
  answerRecipientRequest: { method: 'post', path: '/recipient/request/answer', creates: false },
} as const;
