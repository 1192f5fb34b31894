import { createTenant, getTenant, listTenants, renameTenant } from '../domain/tenants/tenants';
import { creation, type HandlerMap } from './types';

/** The operations tagged Tenants in openapi/api.yaml, in the spec's order. */
export const tenants = {
  listTenants: async ({ db, actor, query }) => ({
    status: 200,
    body: { tenants: await listTenants(db, actor, query) },
  }),

  createTenant: creation(
    ({ db, actor, body, limits, heldKey }) => createTenant(db, actor, body, limits.tenantsPerUser, heldKey),
    (tenant) => ({ status: 201, body: { tenant }, location: `/tenants/${tenant.id}` }),
  ),

  getTenant: async ({ db, actor, params }) => ({
    status: 200,
    body: { tenant: await getTenant(db, actor, params.tenant_id) },
  }),

  updateTenant: async ({ db, actor, params, body, ifMatch }) => ({
    status: 200,
    body: { tenant: await renameTenant(db, actor, params.tenant_id, body.name, ifMatch) },
  }),
} satisfies Partial<HandlerMap>;
