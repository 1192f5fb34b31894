import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from './http-error';
import type { Sql } from './sql';

// Who calls (the API key, checked as the server checks it) and whether they may act on the tenant (their role).

export interface Actor {
  userId: string;
  firstName: string;
  lastName: string;
  email: string;
}

const KEY_PATTERN = /^(wk_[a-z0-9]{10})_[A-Za-z0-9_-]{43}$/;
const LAST_USED_PRECISION_MS = 60_000;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export async function authenticate(sql: Sql, authorization: string | undefined): Promise<Actor> {
  const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  const prefix = presented === undefined ? undefined : KEY_PATTERN.exec(presented)?.[1];
  if (presented === undefined || prefix === undefined) throw new HttpError(401, 'unauthenticated');
  const [key] = await sql.query<{
    id: string;
    user_id: string;
    secret_hash: string;
    revoked_at: Date | null;
    last_used_at: Date | null;
    first_name: string;
    last_name: string;
    email: string;
  }>(
    `SELECT k.id, k.user_id, k.secret_hash, k.revoked_at, k.last_used_at, u.first_name, u.last_name, u.email
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = $1`,
    [prefix],
  );
  const hash = sha256(presented);
  if (
    !key ||
    key.secret_hash.length !== hash.length ||
    !timingSafeEqual(Buffer.from(hash), Buffer.from(key.secret_hash))
  ) {
    throw new HttpError(401, 'unauthenticated');
  }
  if (key.revoked_at) throw new HttpError(401, 'unauthenticated');
  const now = new Date();
  if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() > LAST_USED_PRECISION_MS) {
    await sql.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [key.id, now]);
  }
  return { userId: key.user_id, firstName: key.first_name, lastName: key.last_name, email: key.email };
}

const rank = { member: 1, admin: 2, owner: 3 } as const;

export async function authorize(sql: Sql, actor: Actor, tenantId: string, minimum: keyof typeof rank): Promise<void> {
  const [membership] = await sql.query<{ role: keyof typeof rank }>(
    'SELECT role FROM memberships WHERE tenant_id = $1 AND user_id = $2',
    [tenantId, actor.userId],
  );
  if (!membership) throw new HttpError(404, 'not_found');
  if (rank[membership.role] < rank[minimum]) throw new HttpError(403, 'forbidden');
}
