import type { RequestRef } from '../../domain/requests/requests';

/** The path parameters every request operation shares. */
export const requestRef = (params: { tenant_id: string; work_id: string; id: string }): RequestRef => ({
  tenantId: params.tenant_id,
  workId: params.work_id,
  requestId: params.id,
});
