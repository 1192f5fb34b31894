import { createHash } from 'node:crypto';
import type { Db } from '../handle';
import type { SqlSession } from '../migrate';
import { countMembersAddedSql } from '../counts';

/**
 * The large data set, loaded with plain SQL (`INSERT … SELECT … generate_series`, one statement per
 * table or two, no round trip per row), for `pnpm bench -- --scale` and for tests that need a seeded database.
 * One loader for both, so that what the benchmark measures and what the tests check are the same data.
 *
 * What it holds (the `production` shape; `pglite` is about a tenth of it, `small` is for tests):
 *
 * | rows | production | pglite | small | how |
 * | --- | ---: | ---: | ---: | --- |
 * | tenants of the heavy user | 100,000 | 10,000 | 2,000 | "Studio n" (slug `studio-n`); its oldest is the big tenant, "Big Studio" |
 * | tenants named "Acme" | 20,000 | 2,000 | 500 | slugs `acme`, `acme-2`, … `acme-20000`, owned by the other users |
 * | other tenants | 200,000 | 20,000 | 2,000 | "Org n", owned by the other users |
 * | other users | 20,000 | 2,000 | 200 | owners of the Acme and other tenants; the first ones are the big tenant's members |
 * | members of the big tenant | 100 | 100 | 30 | besides its owner; the first tenth admins |
 * | works of the big tenant | 200,000 | 20,000 | 5,000 | every tenth discarded; the newest is the big work |
 * | requests of the big work | 1,000,000 | 100,000 | 20,000 | 60% pending, 15% confirmed, 10% validated, 5% validated early, 10% cancelled |
 * | request events | 500,000 | 50,000 | 10,000 | the events of those transitions (validated: confirm then validate) |
 * | revoked API keys of the heavy user | 1,000 | 1,000 | 200 | besides its one active key |
 * | expired idempotency keys | 300,000 | 30,000 | 3,000 | stored 201 responses whose 24 hours ended 1 to 24 hours ago |
 * | webhook events and deliveries past retention | 300,000 each | 30,000 | 3,000 | 31 to 90 days old, delivered, to one disabled endpoint of the big tenant |
 *
 * Every tenant has its owner's membership. Rows are valid for the application: ids are UUIDv7 whose time is the
 * row's `createdAt`, every row older than `at` (so rows the API creates afterwards are newer, as keyset paging
 * expects); the three groups of tenants are interleaved in time; slugs follow the slug rules; statuses carry the
 * fields and events their transitions set. The heavy user's one active API key has a secret derived from the
 * namespace, returned in the result: load this only into databases made for benchmarks and tests.
 *
 * Deterministic: the same shape, namespace and `at` give the same rows (the random part of each id is an md5 of
 * the namespace, the kind of row and its number). It ends with `VACUUM (ANALYZE)` of the tables it filled, so that
 * plans and index-only scans are those of a settled database. Works on PostgreSQL and PGlite (`SqlSession`).
 */
export interface LargeDatasetShape {
  /** Tenants the heavy user owns; its oldest is the big tenant. */
  heavyUserTenants: number;
  /** Tenants all named the popular name ("Acme"), owned by the other users. */
  popularNameTenants: number;
  /** More tenants, owned by the other users. */
  otherTenants: number;
  /** Users besides the heavy user (at least 1 when there are Acme or other tenants, at least `bigTenantMembers`). */
  otherUsers: number;
  /** Members of the big tenant besides its owner, taken from the other users. */
  bigTenantMembers: number;
  /** Works of the big tenant (at least 1: the newest is the big work). */
  bigTenantWorks: number;
  /** Requests of the big work. */
  bigWorkRequests: number;
  /** Revoked API keys of the heavy user. */
  revokedApiKeys: number;
  /** Idempotency keys past expiry (the janitor deletes them). */
  expiredIdempotencyKeys: number;
  /** Webhook events past the 30-day retention, each with one delivered delivery (the dispatcher deletes them). */
  webhookHistory: number;
}

export const LARGE_DATASET_SHAPES = {
  /** Production volumes: PostgreSQL, a couple of minutes to load. */
  production: {
    heavyUserTenants: 100_000,
    popularNameTenants: 20_000,
    otherTenants: 200_000,
    otherUsers: 20_000,
    bigTenantMembers: 100,
    bigTenantWorks: 200_000,
    bigWorkRequests: 1_000_000,
    revokedApiKeys: 1_000,
    expiredIdempotencyKeys: 300_000,
    webhookHistory: 300_000,
  },
  /** What embedded PGlite holds comfortably: about a tenth (100k requests in one work). */
  pglite: {
    heavyUserTenants: 10_000,
    popularNameTenants: 2_000,
    otherTenants: 20_000,
    otherUsers: 2_000,
    bigTenantMembers: 100,
    bigTenantWorks: 20_000,
    bigWorkRequests: 100_000,
    revokedApiKeys: 1_000,
    expiredIdempotencyKeys: 30_000,
    webhookHistory: 30_000,
  },
  /** For tests: tens of thousands of rows where a plan can depend on it, a few seconds on PGlite. */
  small: {
    heavyUserTenants: 2_000,
    popularNameTenants: 500,
    otherTenants: 2_000,
    otherUsers: 200,
    bigTenantMembers: 30,
    bigTenantWorks: 5_000,
    bigWorkRequests: 20_000,
    revokedApiKeys: 200,
    expiredIdempotencyKeys: 3_000,
    webhookHistory: 3_000,
  },
} as const satisfies Record<string, LargeDatasetShape>;

export type LargeDatasetShapeName = keyof typeof LARGE_DATASET_SHAPES;

export interface LoadLargeDatasetOptions {
  /**
   * Put into every email, name and slug (lower-case letters and digits, at most 20), so that several loads can
   * share one database, as tests on one PostgreSQL do: the popular name becomes "Acme <namespace>". Empty (the
   * default): the names above.
   */
  namespace?: string;
  /** Every row is older than this (default: now). */
  at?: Date;
}

export interface LargeDataset {
  shape: LargeDatasetShape;
  namespace: string;
  at: Date;
  heavyUser: { id: string; email: string; apiKeyId: string; apiKey: string };
  /** The heavy user's oldest tenant: `bigTenantWorks` works, `bigTenantMembers` + 1 members. */
  bigTenantId: string;
  /** The big tenant's newest work, with `bigWorkRequests` requests. */
  bigWorkId: string;
  /** The name `popularNameTenants` tenants share ("Acme"), and the slug the first of them has ("acme"). */
  popularName: string;
  popularSlug: string;
  /** The big tenant's disabled endpoint that the webhook history was delivered to. */
  webhookEndpointId: string;
  /** What was loaded, for assertions (computed from the shape, the same rules as the SQL). */
  counts: {
    users: number;
    tenants: number;
    heavyUserTenants: number;
    bigTenantMembers: number;
    bigTenantKeptWorks: number;
    bigTenantDiscardedWorks: number;
    bigWorkRequests: number;
    bigWorkByStatus: Record<'pending' | 'confirmed' | 'validated' | 'cancelled', number>;
    requestEvents: number;
    heavyUserApiKeys: number;
  };
  /** Milliseconds per step, for the benchmark's log. */
  timings: Array<{ step: string; ms: number }>;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * The status of request n of the big work, by n % 20: 12 in 20 pending, 3 confirmed, 2 validated, 1 validated
 * early, 2 cancelled. One rule for the SQL and the counts.
 */
const REQUEST_MIX = [
  { status: 'pending', from: 0, to: 11 },
  { status: 'confirmed', from: 12, to: 14 },
  { status: 'validated', from: 15, to: 16 },
  { status: 'validated', from: 17, to: 17 }, // early
  { status: 'cancelled', from: 18, to: 19 },
] as const;

/** Where row n (from 1) of one kind sits in time, and the salt that makes its id its own. */
interface Series {
  salt: string;
  startMs: number;
  stepMs: number;
}

/** `count` rows spread evenly over [fromMs, toMs). */
function series(salt: string, fromMs: number, toMs: number, count: number): Series {
  return {
    salt,
    startMs: Math.round(fromMs),
    stepMs: count > 1 ? Math.max(1, Math.floor((toMs - fromMs) / count)) : 0,
  };
}

// SQL expressions. `$1` is always the seed (the namespace); numbers are written in, never user input.
const int = (value: number): string => {
  if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
  return String(value);
};
/** The time of row `n` of a series, in ms since the epoch (bigint). */
const msOf = (s: Series, n: string) => `(${int(s.startMs)}::bigint + (${n} - 1)::bigint * ${int(s.stepMs)})`;
/**
 * A UUIDv7: `ms` as its 48-bit time, version 7, variant 10, the remaining 74 bits from an md5 of the seed and
 * `key`. `overlay … placing '8' from 4` puts the variant nibble in, so one md5 makes the whole id.
 */
const uuid7 = (ms: string, key: string) =>
  `(lpad(to_hex(${ms}), 12, '0') || '7' || left(overlay(md5($1 || ':' || ${key}) placing '8' from 4 for 0), 19))::uuid`;
const idOf = (s: Series, n: string) => uuid7(msOf(s, n), `'${s.salt}:' || ${n}`);
const timeOf = (ms: string) => `to_timestamp((${ms})::double precision / 1000)`;
/** The ms of a timestamptz(3) column, exactly. */
const msOfColumn = (column: string) => `(extract(epoch from ${column}) * 1000)::bigint`;

/** Where each kind of row sits in time: a series per kind, ending before `atMs` (the moment of loading). */
function seriesOf(shape: LargeDatasetShape, atMs: number) {
  return {
    heavyUser: series('heavy-user', atMs - 400 * DAY_MS, atMs - 400 * DAY_MS + 1, 1),
    users: series('user', atMs - 399 * DAY_MS, atMs - 380 * DAY_MS, shape.otherUsers),
    // The three groups of tenants spread over the same year: interleaved in id order, as real sign-ups are.
    heavyTenants: series('heavy-tenant', atMs - 370 * DAY_MS, atMs - 60 * DAY_MS, shape.heavyUserTenants),
    popularTenants: series('popular-tenant', atMs - 370 * DAY_MS + 7, atMs - 60 * DAY_MS, shape.popularNameTenants),
    otherTenants: series('other-tenant', atMs - 370 * DAY_MS + 13, atMs - 60 * DAY_MS, shape.otherTenants),
    members: series('member', atMs - 369 * DAY_MS, atMs - 368 * DAY_MS, shape.bigTenantMembers),
    endpoint: series('endpoint', atMs - 365 * DAY_MS, atMs - 365 * DAY_MS + 1, 1),
    revokedKeys: series('revoked-key', atMs - 360 * DAY_MS, atMs - 100 * DAY_MS, shape.revokedApiKeys),
    works: series('work', atMs - 360 * DAY_MS, atMs - 40 * DAY_MS, shape.bigTenantWorks),
    requests: series('request', atMs - 39 * DAY_MS, atMs - 2 * DAY_MS, shape.bigWorkRequests),
    webhookEvents: series('webhook-event', atMs - 90 * DAY_MS, atMs - 31 * DAY_MS, shape.webhookHistory),
    idempotencyKeys: series('idempotency-key', atMs - 48 * HOUR_MS, atMs - 25 * HOUR_MS, shape.expiredIdempotencyKeys),
    activeKey: series('active-key', atMs - DAY_MS, atMs - DAY_MS + 1, 1),
  };
}

/** The ids the statements refer to, computed once by the same SQL expressions that make them. */
interface DatasetIds {
  heavy_user: string;
  big_tenant: string;
  big_work: string;
  endpoint: string;
  active_key: string;
}

/** What every step of a load shares. */
interface Load {
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

/** Loads the data set (see above) into a migrated database; returns what a benchmark or test needs to use it. */
export async function loadLargeDataset(
  session: SqlSession,
  shape: LargeDatasetShape,
  options: LoadLargeDatasetOptions = {},
): Promise<LargeDataset> {
  const namespace = options.namespace ?? '';
  if (!/^[a-z0-9]{0,20}$/.test(namespace)) throw new Error('namespace: lower-case letters and digits, at most 20');
  checkShape(shape);
  const at = options.at ?? new Date();
  const tag = namespace ? `-${namespace}` : '';
  const nameTag = namespace ? ` ${namespace}` : '';
  const seed = `works-api-large-dataset${tag}`;
  const s = seriesOf(shape, at.getTime());

  const [ids] = await session.query<DatasetIds>(
    `SELECT ${idOf(s.heavyUser, '1')} AS heavy_user, ${idOf(s.heavyTenants, '1')} AS big_tenant,
            ${idOf(s.works, int(shape.bigTenantWorks))} AS big_work, ${idOf(s.endpoint, '1')} AS endpoint,
            ${idOf(s.activeKey, '1')} AS active_key`,
    [seed],
  );
  if (!ids) throw new Error('computing the ids returned nothing');
  const timings: LargeDataset['timings'] = [];
  const load: Load = {
    shape,
    tag,
    nameTag,
    s,
    ids,
    heavyEmail: `scale-heavy${tag}@example.com`,
    apiKey: activeApiKey(seed),
    popularName: `Acme${nameTag}`,
    popularSlug: `acme${tag}`,
    otherUserId: (n) => idOf(s.users, n),
    async step(name, sql, params = []) {
      const started = Date.now();
      await session.query(sql, [seed, ...params]);
      timings.push({ step: name, ms: Date.now() - started });
    },
  };

  await loadUsers(load);
  await loadTenants(load);
  await loadBigTenant(load);
  await loadBigWork(load);
  await loadExpiredIdempotencyKeys(load);
  await loadWebhookHistory(load);

  const started = Date.now();
  await session.query(
    `VACUUM (ANALYZE) users, api_keys, tenants, memberships, works, requests, request_events, idempotency_keys,
                      webhook_endpoints, webhook_events, webhook_deliveries`,
  );
  timings.push({ step: 'vacuum and analyze', ms: Date.now() - started });

  return {
    shape,
    namespace,
    at,
    heavyUser: { id: ids.heavy_user, email: load.heavyEmail, apiKeyId: ids.active_key, apiKey: load.apiKey.secret },
    bigTenantId: ids.big_tenant,
    bigWorkId: ids.big_work,
    popularName: load.popularName,
    popularSlug: load.popularSlug,
    webhookEndpointId: ids.endpoint,
    counts: countsOf(shape),
    timings,
  };
}

/** The heavy user (with the active API key and the revoked ones) and the other users. */
async function loadUsers({ step, s, shape, ids, tag, heavyEmail, apiKey, otherUserId }: Load): Promise<void> {
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
async function loadTenants({
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
  // namespace goes in as a literal (checked above), so that every statement uses each of its parameters.
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
async function loadBigTenant({ step, s, shape, ids, otherUserId }: Load): Promise<void> {
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
async function loadBigWork({ step, s, shape, ids }: Load): Promise<void> {
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
async function loadExpiredIdempotencyKeys({ step, s, shape, ids, tag }: Load): Promise<void> {
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
async function loadWebhookHistory({ step, s, shape, ids }: Load): Promise<void> {
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

/**
 * The id of the request at `position` (from 1) in a work's list, newest first (with `status`, in that filtered
 * list): the `after` cursor of a page deep in it is this id's cursor. One index walk; for setting up, not for
 * requests.
 */
export async function nthNewestRequestId(
  session: SqlSession,
  workId: string,
  position: number,
  status?: 'pending' | 'confirmed' | 'validated' | 'cancelled',
): Promise<string> {
  const [row] = await session.query<{ id: string }>(
    `SELECT id FROM requests WHERE work_id = $1::uuid AND ($2::request_status IS NULL OR status = $2::request_status)
     ORDER BY id DESC OFFSET $3 LIMIT 1`,
    [workId, status ?? null, position - 1],
  );
  if (!row) throw new Error(`the work has fewer than ${position} requests${status ? ` ${status}` : ''}`);
  return row.id;
}

/** A session on the app's own connections (`openDatabase`'s client): to load into the database a test server uses. */
export function sessionOf(db: Db): SqlSession {
  return {
    exec: async (sql) => void (await db.statement(sql, [])),
    query: (sql, params = []) => db.statement(sql, params),
  };
}

/** Every tenth work is discarded (n % 10 = 5), except the big work (the last one). */
const isDiscarded = (n: number, works: number) => n % 10 === 5 && n !== works;
const discardedSql = (n: string, works: number) => `(${n} % 10 = 5 AND ${n} <> ${int(works)})`;

function countsOf(shape: LargeDatasetShape): LargeDataset['counts'] {
  let discarded = 0;
  for (let n = 1; n <= shape.bigTenantWorks; n++) if (isDiscarded(n, shape.bigTenantWorks)) discarded++;
  const byStatus = { pending: 0, confirmed: 0, validated: 0, cancelled: 0 };
  // Per block of 20 requests, then the rest.
  const full = Math.floor(shape.bigWorkRequests / 20);
  const rest = shape.bigWorkRequests % 20;
  let events = 0;
  for (let r = 0; r < 20; r++) {
    const times = full + (r >= 1 && r <= rest ? 1 : 0); // n = 20k + r, n from 1: r = 1..rest are the extra ones
    const mix = REQUEST_MIX.find((m) => r >= m.from && r <= m.to)!;
    byStatus[mix.status] += times;
    events += times * (mix.status === 'pending' ? 0 : r === 15 || r === 16 ? 2 : 1);
  }
  return {
    users: 1 + shape.otherUsers,
    tenants: shape.heavyUserTenants + shape.popularNameTenants + shape.otherTenants,
    heavyUserTenants: shape.heavyUserTenants,
    bigTenantMembers: shape.bigTenantMembers + 1,
    bigTenantKeptWorks: shape.bigTenantWorks - discarded,
    bigTenantDiscardedWorks: discarded,
    bigWorkRequests: shape.bigWorkRequests,
    bigWorkByStatus: byStatus,
    requestEvents: events,
    heavyUserApiKeys: 1 + shape.revokedApiKeys,
  };
}

function checkShape(shape: LargeDatasetShape): void {
  for (const [field, value] of Object.entries(shape)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`shape.${field} must be a whole number`);
  }
  if (shape.heavyUserTenants < 1) throw new Error('shape.heavyUserTenants must be at least 1 (the big tenant)');
  if (shape.bigTenantWorks < 1) throw new Error('shape.bigTenantWorks must be at least 1 (the big work)');
  if (shape.otherUsers < shape.bigTenantMembers) throw new Error('shape.otherUsers must be at least bigTenantMembers');
  if (shape.otherUsers < 1 && shape.popularNameTenants + shape.otherTenants > 0)
    throw new Error('shape.otherUsers must be at least 1 to own the Acme and other tenants');
}

/** The heavy user's API key, derived from the seed: `wk_<10>_<43>` like every key (domain/api-keys/secrets.ts). */
function activeApiKey(seed: string): { prefix: string; secret: string } {
  const digest = createHash('sha256').update(`${seed}:api-key`).digest();
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const prefix = `wk_${Array.from(digest.subarray(0, 10), (byte) => alphabet[byte % alphabet.length]).join('')}`;
  return { prefix, secret: `${prefix}_${createHash('sha256').update(digest).digest('base64url')}` };
}
