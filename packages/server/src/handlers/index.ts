import type { HandlerMap } from '../http/handler';
import { createApiKey } from './account/create-api-key';
import { getMe } from './account/get-me';
import { listApiKeys } from './account/list-api-keys';
import { revokeApiKey } from './account/revoke-api-key';
import { adminCreateUser } from './admin/admin-create-user';
import { addMember } from './members/add-member';
import { getMember } from './members/get-member';
import { listMembers } from './members/list-members';
import { removeMember } from './members/remove-member';
import { updateMember } from './members/update-member';
import { cancelRequest } from './requests/cancel-request';
import { confirmRequest } from './requests/confirm-request';
import { createRequest } from './requests/create-request';
import { earlyValidateRequest } from './requests/early-validate-request';
import { getRequest } from './requests/get-request';
import { listRequestEvents } from './requests/list-request-events';
import { listRequests } from './requests/list-requests';
import { validateRequest } from './requests/validate-request';
import { createTenant } from './tenants/create-tenant';
import { getTenant } from './tenants/get-tenant';
import { listTenants } from './tenants/list-tenants';
import { updateTenant } from './tenants/update-tenant';
import { createWebhookEndpoint } from './webhooks/create-webhook-endpoint';
import { deleteWebhookEndpoint } from './webhooks/delete-webhook-endpoint';
import { getWebhookEndpoint } from './webhooks/get-webhook-endpoint';
import { listWebhookDeliveries } from './webhooks/list-webhook-deliveries';
import { listWebhookEndpoints } from './webhooks/list-webhook-endpoints';
import { retryWebhookDelivery } from './webhooks/retry-webhook-delivery';
import { rotateWebhookEndpointSecret } from './webhooks/rotate-webhook-endpoint-secret';
import { testWebhookEndpoint } from './webhooks/test-webhook-endpoint';
import { updateWebhookEndpoint } from './webhooks/update-webhook-endpoint';
import { createWork } from './works/create-work';
import { discardWork } from './works/discard-work';
import { getWork } from './works/get-work';
import { listWorks } from './works/list-works';
import { undiscardWork } from './works/undiscard-work';
import { updateWork } from './works/update-work';

/** Every operation of openapi/api.yaml and its handler. `satisfies` makes a missing one a compile error. */
export const handlers = {
  adminCreateUser,
  getMe,
  listApiKeys,
  createApiKey,
  revokeApiKey,
  listTenants,
  createTenant,
  getTenant,
  updateTenant,
  listMembers,
  addMember,
  getMember,
  updateMember,
  removeMember,
  listWorks,
  createWork,
  getWork,
  updateWork,
  discardWork,
  undiscardWork,
  listRequests,
  createRequest,
  getRequest,
  listRequestEvents,
  cancelRequest,
  confirmRequest,
  earlyValidateRequest,
  validateRequest,
  listWebhookEndpoints,
  createWebhookEndpoint,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookEndpointSecret,
  testWebhookEndpoint,
  listWebhookDeliveries,
  retryWebhookDelivery,
} satisfies HandlerMap;
