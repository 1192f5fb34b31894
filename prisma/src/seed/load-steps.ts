import { createHash } from 'node:crypto';
import { countMembersAddedSql } from '../counts';
import { discardedSql } from './expected-counts';
import { idOf, int, msOf, msOfColumn, type seriesOf, timeOf, uuid7 } from './series-sql';
import type { LargeDatasetShape } from './shapes';

// The steps of a load, one group of tables each, all sharing a Load (large-dataset.ts makes it and runs them in order).

/** The ids the statements refer to, computed once by the same SQL expressions that make them. */
export interface DatasetIds {
  heavy_user: string;
  big_tenant: string;
  big_work: string;
  endpoint: string;
  active_key: string;
}

/** What every step of a load shares. */
export interface Load {
  shape: LargeDatasetShape;
  /** `-<namespace>` (or nothing), for emails and slugs; `nameTag` is ` <namespace>`, for names. */
  tag: string;
  nameTag: string;
  s: ReturnType<typeof seriesOf>;
  ids: DatasetIds;
  heavyEmail: string;
  apiKey: ReturnType<typeof activeApiKey>;
  popularName: string;
  popularSlug: string;
  otherUserId: (n: string) => string;
  /** Runs one statement with the seed as `$1` and `params` after it, and times it. */
  step: (name: string, sql: string, params?: unknown[]) => Promise<void>;
}

/** The heavy user (with the active API key and the revoked ones) and the other users. */
export async function loadUsers({ step, s, shape, ids, tag, heavyEmail, apiKey, otherUserId }: Load): Promise<void> {
  await step(
    'users',
    `INSERT INTO users (id, email, first_name, last_name, created_at)
     SELECT $2::uuid, $3, 'Heavy', 'User', ${timeOf(msOf(s.heavyUser, '1'))}
     UNION ALL
     SELECT ${otherUserId('n')}, 'scale-user-' || n || $4 || '@example.com', 'User', n::text, ${timeOf(msOf(s.users, 'n'))}
     FROM generate_series(1, ${int(shape.otherUsers)}) n`,
    [ids.heavy_user, heavyEmail, tag],
  );

  await step(
    'api keys',
    `INSERT INTO api_keys (id, user_id, name, prefix, secret_hash, created_at, last_used_at, revoked_at)
     SELECT $2::uuid, $3::uuid, 'Benchmark', $4, $5, ${timeOf(msOf(s.activeKey, '1'))}, NULL::timestamptz, NULL::timestamptz
     UNION ALL
     SELECT ${idOf(s.revokedKeys, 'n')}, $3::uuid, 'Old key ' || n, 'wk_' || left(md5($1 || ':key-prefix:' || n), 10),
            md5($1 || ':key-secret:' || n) || md5($1 || ':key-secret2:' || n), t.at, NULL, t.at + interval '1 day'
     FROM generate_series(1, ${int(shape.revokedApiKeys)}) n
     CROSS JOIN LATERAL (SELECT ${timeOf(msOf(s.revokedKeys, 'n'))} AS at) t`,
    [ids.active_key, ids.heavy_user, apiKey.prefix, createHash('sha256').update(apiKey.secret).digest('hex')],
  );
}
/** The tenants of the three groups, each with its owner's membership. */
export async function loadTenants({
  step,
  s,
  shape,
  nameTag,
  tag,
  popularName,
  popularSlug,
  otherUserId,
}: Load): Promise<void> {
  // Tenants and their owners' memberships, one statement per group; a membership shares its tenant's time. The
  // namespace goes in as a literal (checked by loadLargeDataset), so that every statement uses each of its parameters.
  const ownerOf = (n: string) => otherUserId(`((${n} - 1) % ${int(Math.max(1, shape.otherUsers))} + 1)`);
  const tenantGroups = [
    {
      step: 'tenants of the heavy user',
      series: s.heavyTenants,
      count: shape.heavyUserTenants,
      name: `CASE WHEN n = 1 THEN 'Big Studio${nameTag}' ELSE 'Studio ' || n || '${nameTag}' END`,
      slug: `CASE WHEN n = 1 THEN 'big-studio${tag}' ELSE 'studio-' || n || '${tag}' END`,
      owner: idOf(s.heavyUser, '1'),
    },
    {
      step: 'tenants named like many',
      series: s.popularTenants,
      count: shape.popularNameTenants,
      name: `'${popularName}'`,
      slug: `'${popularSlug}' || CASE WHEN n = 1 THEN '' ELSE '-' || n END`,
      owner: ownerOf('n'),
    },
    {
      step: 'other tenants',
      series: s.otherTenants,
      count: shape.otherTenants,
      name: `'Org ' || n || '${nameTag}'`,
      slug: `'org-' || n || '${tag}'`,
      owner: ownerOf('n'),
    },
  ];
  for (const group of tenantGroups) {
    if (group.count === 0) continue;
    await step(`${group.step}: slug counters`, raiseSlugCounters('tenant_slug_counters', '', group.slug, group.count));
    await step(
      group.step,
      `WITH tenant AS (
         INSERT INTO tenants (id, name, slug, owner_id, created_at, updated_at)
         SELECT ${uuid7('t.ms', `'${group.series.salt}:' || n`)}, ${group.name}, ${group.slug}, ${group.owner},
                ${timeOf('t.ms')}, ${timeOf('t.ms')}
         FROM generate_series(1, ${int(group.count)}) n
         CROSS JOIN LATERAL (SELECT ${msOf(group.series, 'n')} AS ms) t
         RETURNING id, owner_id, created_at),
       -- Counted as create tenant counts them (count_new_tenant, without the cap): the owners' owned tenants and
       -- memberships, and each tenant's one member.
       owners_counted AS (
         INSERT INTO user_counts AS c (user_id, slot, owned_tenants, memberships)
         SELECT owner_id, 0, count(*), count(*) FROM tenant GROUP BY owner_id ORDER BY owner_id
         ON CONFLICT (user_id, slot) DO UPDATE
           SET owned_tenants = c.owned_tenants + excluded.owned_tenants,
               memberships = c.memberships + excluded.memberships),
       members_counted AS (INSERT INTO tenant_counts (tenant_id, slot, members) SELECT id, 0, 1 FROM tenant)
       INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
       SELECT ${uuid7(msOfColumn('created_at'), `'owner:' || id`)}, id, owner_id, 'owner', created_at FROM tenant`,
    );
  }
}
/**
 * Raises the slug counters to the highest number each base takes in a bulk insert of `count` rows (n = 1 to count)
 * whose slugs are `slug`, before the insert: the triggers that raise a counter run once per numbered row
 * (migrations 20261129030000 and 20261129030100) and write only when they raise it, so they then write nothing;
 * raised row by row in ascending order, one counter row would be rewritten once per row, in one transaction.
 * `tenant` is the works' tenant ('' for tenants); `$1`, the seed, is in every statement (see `step`).
 */
function raiseSlugCounters(table: string, tenant: string, slug: string, count: number): string {
  const key = tenant ? 'tenant_id, base' : 'base';
  return `INSERT INTO ${table} AS c (${key}, last_number)
    SELECT ${tenant ? `${tenant}, ` : ''}m[1], max(m[2]::int)
    FROM generate_series(1, ${int(count)}) n, regexp_match(${slug}, '^(.+)-([0-9]{1,9})$') AS m
    WHERE m[2]::int >= 2 AND $1::text IS NOT NULL
    GROUP BY m[1]
    ON CONFLICT (${key}) DO UPDATE SET last_number = greatest(c.last_number, excluded.last_number)`;
}

/** The big tenant's members and works (the last of them the big work). */
export async function loadBigTenant({ step, s, shape, ids, otherUserId }: Load): Promise<void> {
  await step(
    'members of the big tenant',
    `WITH member AS (
       INSERT INTO memberships (id, tenant_id, user_id, role, created_at)
       SELECT ${idOf(s.members, 'n')}, $2::uuid, ${otherUserId('n')},
              (CASE WHEN n <= ${int(Math.ceil(shape.bigTenantMembers / 10))} THEN 'admin' ELSE 'member' END)::member_role,
              ${timeOf(msOf(s.members, 'n'))}
       FROM generate_series(1, ${int(shape.bigTenantMembers)}) n
       RETURNING tenant_id, user_id),
     ${countMembersAddedSql('member')}
     SELECT 1`,
    [ids.big_tenant],
  );

  const workSlug = `CASE WHEN n = ${int(shape.bigTenantWorks)} THEN 'big-work' ELSE 'work-' || n END`;
  await step(
    'works: slug counters',
    raiseSlugCounters('work_slug_counters', '$2::uuid', workSlug, shape.bigTenantWorks),
    [ids.big_tenant],
  );
  await step(
    'works',
    `INSERT INTO works (id, tenant_id, slug, name, description, owner_id, created_at, updated_at, discarded_at, search)
     SELECT ${uuid7('t.ms', `'${s.works.salt}:' || n`)}, $2::uuid,
            ${workSlug},
            CASE WHEN n = ${int(shape.bigTenantWorks)} THEN 'Big work' ELSE 'Work ' || n END,
            'A work of the large data set.', $3::uuid, ${timeOf('t.ms')},
            ${timeOf('t.ms')} + CASE WHEN t.discarded THEN interval '1 day' ELSE interval '0' END,
            CASE WHEN t.discarded THEN ${timeOf('t.ms')} + interval '1 day' END,
            -- The search text the application writes (domain/search/fold.ts): name, slug, description.
            CASE WHEN n = ${int(shape.bigTenantWorks)} THEN ' big work big work' ELSE ' work ' || n || ' work ' || n END
              || ' a work of the large data set'
     FROM generate_series(1, ${int(shape.bigTenantWorks)}) n
     CROSS JOIN LATERAL (SELECT ${msOf(s.works, 'n')} AS ms, ${discardedSql('n', shape.bigTenantWorks)} AS discarded) t`,
    [ids.big_tenant, ids.heavy_user],
  );
}
/** The big work's requests in their status mix, and the events of their transitions. */
export async function loadBigWork({ step, s, shape, ids }: Load): Promise<void> {
  // The status mix by n % 20 (REQUEST_MIX): the columns each status's transitions set, a minute apart.
  // Counted in the same statement, as create request counts its request (no insert trigger counts requests).
  await step(
    'requests',
    `WITH inserted AS (
     INSERT INTO requests (id, work_id, status, title, message, recipient_email, recipient_first_name,
                           recipient_last_name, answer, validation, cancel_reason, owner_id, created_at, updated_at,
                           confirmed_at, validated_at, cancelled_at, tenant_id, search)
     SELECT ${uuid7('t.ms', `'${s.requests.salt}:' || n`)}, $2::uuid,
            (CASE WHEN t.r <= 11 THEN 'pending' WHEN t.r <= 14 THEN 'confirmed' WHEN t.r <= 17 THEN 'validated'
                  ELSE 'cancelled' END)::request_status,
            'Request ' || n, 'Please confirm the figures in section 3.', 'recipient-' || (n % 1000) || '@example.com',
            'Grace', 'Hopper',
            CASE WHEN t.r BETWEEN 12 AND 16 THEN 'Confirmed, thanks.' END,
            (CASE WHEN t.r IN (15, 16) THEN 'standard' WHEN t.r = 17 THEN 'early' END)::validation,
            CASE WHEN t.r >= 18 THEN 'Sent by mistake.' END,
            $3::uuid, ${timeOf('t.ms')},
            ${timeOf('t.ms')} + CASE WHEN t.r <= 11 THEN interval '0' WHEN t.r IN (15, 16) THEN interval '2 minutes'
                                     ELSE interval '1 minute' END,
            CASE WHEN t.r BETWEEN 12 AND 16 THEN ${timeOf('t.ms')} + interval '1 minute' END,
            CASE WHEN t.r IN (15, 16) THEN ${timeOf('t.ms')} + interval '2 minutes'
                 WHEN t.r = 17 THEN ${timeOf('t.ms')} + interval '1 minute' END,
            CASE WHEN t.r >= 18 THEN ${timeOf('t.ms')} + interval '1 minute' END,
            $4::uuid,
            -- The search text the application writes (domain/search/fold.ts): title, message, recipient.
            ' request ' || n || ' please confirm the figures in section 3 recipient ' || (n % 1000)
              || ' example com grace hopper'
     FROM generate_series(1, ${int(shape.bigWorkRequests)}) n
     CROSS JOIN LATERAL (SELECT ${msOf(s.requests, 'n')} AS ms, n % 20 AS r) t
     RETURNING work_id, status)
     INSERT INTO work_counts AS c (work_id, slot, pending, confirmed, validated, cancelled)
     SELECT work_id, 0, count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'confirmed'),
            count(*) FILTER (WHERE status = 'validated'), count(*) FILTER (WHERE status = 'cancelled')
     FROM inserted GROUP BY work_id
     ON CONFLICT (work_id, slot) DO UPDATE
       SET pending = c.pending + excluded.pending, confirmed = c.confirmed + excluded.confirmed,
           validated = c.validated + excluded.validated, cancelled = c.cancelled + excluded.cancelled`,
    [ids.big_work, ids.heavy_user, ids.big_tenant],
  );

  await step(
    'request events',
    `INSERT INTO request_events (id, request_id, action, from_status, to_status, actor_id, note, created_at)
     SELECT ${uuid7('t.ms + e.after_ms', `'request-event:' || n || ':' || e.k`)}, ${uuid7('t.ms', `'${s.requests.salt}:' || n`)},
            e.action::request_action, e.from_status::request_status, e.to_status::request_status, $2::uuid, e.note,
            ${timeOf('t.ms + e.after_ms')}
     FROM generate_series(1, ${int(shape.bigWorkRequests)}) n
     CROSS JOIN LATERAL (SELECT ${msOf(s.requests, 'n')} AS ms, n % 20 AS r) t
     JOIN (VALUES (1, 'confirm', 'pending', 'confirmed', 60000, 'Confirmed, thanks.', 12, 16),
                  (2, 'validate', 'confirmed', 'validated', 120000, NULL, 15, 16),
                  (3, 'early_validate', 'pending', 'validated', 60000, NULL, 17, 17),
                  (4, 'cancel', 'pending', 'cancelled', 60000, 'Sent by mistake.', 18, 19))
          AS e (k, action, from_status, to_status, after_ms, note, r_from, r_to)
       ON t.r BETWEEN e.r_from AND e.r_to`,
    [ids.heavy_user],
  );
}
/** Idempotency keys past their 24 hours, for the janitor. */
export async function loadExpiredIdempotencyKeys({ step, s, shape, ids, tag }: Load): Promise<void> {
  await step(
    'expired idempotency keys',
    `INSERT INTO idempotency_keys (scope, key, request, body_hash, status, content_type, location, body, locked_at,
                                   created_at, expires_at)
     SELECT $2, 'scale' || $3 || '-' || n, 'POST /v1/tenants', md5($1 || ':body:' || n) || md5($1 || ':body2:' || n),
            201, 'application/json', '/v1/tenants/' || t.id,
            '{"tenant":{"id":"' || t.id || '","name":"Retried ' || n || '","slug":"retried-' || n || '"}}',
            t.at, t.at, t.at + interval '24 hours'
     FROM generate_series(1, ${int(shape.expiredIdempotencyKeys)}) n
     CROSS JOIN LATERAL (SELECT ${idOf(s.idempotencyKeys, 'n')} AS id, ${timeOf(msOf(s.idempotencyKeys, 'n'))} AS at) t`,
    [ids.heavy_user, tag],
  );
}
/** The big tenant's (disabled) webhook endpoint and its delivery history past retention. */
export async function loadWebhookHistory({ step, s, shape, ids }: Load): Promise<void> {
  await step(
    'webhook endpoint',
    `INSERT INTO webhook_endpoints (id, tenant_id, url, description, event_types, enabled, disabled_reason, secret,
                                    created_at, updated_at)
     SELECT $2::uuid, $3::uuid, 'https://hooks.example.com/works-api', 'History of the large data set', '{}', false,
            'by_user', 'whsec_' || encode(decode(md5($1 || ':whsec') || md5($1 || ':whsec2'), 'hex'), 'base64'),
            ${timeOf(msOf(s.endpoint, '1'))}, ${timeOf(msOf(s.endpoint, '1'))}`,
    [ids.endpoint, ids.big_tenant],
  );

  // Events past retention and their one delivery each, shaped like request.created events that went out.
  await step(
    'webhook history',
    `WITH event AS (
       INSERT INTO webhook_events (id, tenant_id, type, ordering_key, endpoint_id, body, created_at, fanned_out_at)
       SELECT t.id, $2::uuid, 'request.created', t.request_id, NULL,
              json_build_object('id', t.id, 'type', 'request.created',
                'createdAt', to_char(t.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'tenantId', $2::uuid,
                'data', json_build_object('request', json_build_object('id', t.request_id, 'workId', $4::uuid,
                  'status', 'pending', 'title', 'Request ' || n,
                  'recipient', json_build_object('email', 'recipient-' || (n % 1000) || '@example.com',
                                                 'firstName', 'Grace', 'lastName', 'Hopper'))))::text,
              t.at, t.at + interval '1 second'
       FROM generate_series(1, ${int(shape.webhookHistory)}) n
       CROSS JOIN LATERAL (SELECT ${idOf(s.webhookEvents, 'n')} AS id,
                                  ${uuid7(msOf(s.webhookEvents, 'n'), "'gone-request:' || n")} AS request_id,
                                  ${timeOf(msOf(s.webhookEvents, 'n'))} AS at) t
       RETURNING id, ordering_key, created_at)
     INSERT INTO webhook_deliveries (id, endpoint_id, tenant_id, event_id, ordering_key, status, attempts,
                                     last_attempt_at, last_status_code, last_duration_ms, delivered_at, created_at)
     SELECT ${uuid7(msOfColumn('created_at'), `'delivery:' || id`)}, $3::uuid, $2::uuid, id, ordering_key, 'delivered', 1,
            created_at + interval '2 seconds', 200, 40, created_at + interval '2 seconds', created_at + interval '1 second'
     FROM event`,
    [ids.big_tenant, ids.endpoint, ids.big_work],
  );
}

/** The heavy user's API key, derived from the seed: `wk_<10>_<43>` like every key (domain/api-keys/secrets.ts). */
export function activeApiKey(seed: string): { prefix: string; secret: string } {
  const digest = createHash('sha256').update(`${seed}:api-key`).digest();
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const prefix = `wk_${Array.from(digest.subarray(0, 10), (byte) => alphabet[byte % alphabet.length]).join('')}`;
  return { prefix, secret: `${prefix}_${createHash('sha256').update(digest).digest('base64url')}` };
}
