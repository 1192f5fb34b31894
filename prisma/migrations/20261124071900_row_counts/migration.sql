-- CreateTable
CREATE TABLE "user_counts" (
    "user_id" UUID NOT NULL,
    "memberships" INTEGER NOT NULL DEFAULT 0,
    "api_keys" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "user_counts_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "tenant_counts" (
    "tenant_id" UUID NOT NULL,
    "kept_works" INTEGER NOT NULL DEFAULT 0,
    "discarded_works" INTEGER NOT NULL DEFAULT 0,
    "members" INTEGER NOT NULL DEFAULT 0,
    "webhook_endpoints" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "tenant_counts_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "work_counts" (
    "work_id" UUID NOT NULL,
    "pending" INTEGER NOT NULL DEFAULT 0,
    "confirmed" INTEGER NOT NULL DEFAULT 0,
    "validated" INTEGER NOT NULL DEFAULT 0,
    "cancelled" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "work_counts_pkey" PRIMARY KEY ("work_id")
);

-- CreateTable
CREATE TABLE "webhook_endpoint_counts" (
    "endpoint_id" UUID NOT NULL,
    "deliveries" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "webhook_endpoint_counts_pkey" PRIMARY KEY ("endpoint_id")
);

-- CreateTable
CREATE TABLE "tenant_slug_counters" (
    "base" TEXT NOT NULL,
    "last_number" INTEGER NOT NULL,

    CONSTRAINT "tenant_slug_counters_pkey" PRIMARY KEY ("base")
);

-- CreateTable
CREATE TABLE "work_slug_counters" (
    "tenant_id" UUID NOT NULL,
    "base" TEXT NOT NULL,
    "last_number" INTEGER NOT NULL,

    CONSTRAINT "work_slug_counters_pkey" PRIMARY KEY ("tenant_id","base")
);

-- AddForeignKey
ALTER TABLE "user_counts" ADD CONSTRAINT "user_counts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tenant_counts" ADD CONSTRAINT "tenant_counts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "work_counts" ADD CONSTRAINT "work_counts_work_id_fkey" FOREIGN KEY ("work_id") REFERENCES "works"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoint_counts" ADD CONSTRAINT "webhook_endpoint_counts_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "work_slug_counters" ADD CONSTRAINT "work_slug_counters_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: partial indexes (schema.prisma cannot express them) for the works lists, kept (the default, and
-- each tenant's embedded first page) and discarded: a page of either reads its own rows only, however the two mix.
CREATE INDEX "works_kept_tenant_id_id_idx" ON "works"("tenant_id", "id") WHERE "discarded_at" IS NULL;
CREATE INDEX "works_discarded_tenant_id_id_idx" ON "works"("tenant_id", "id") WHERE "discarded_at" IS NOT NULL;
-- A page of tenants embeds each one's first works through a lateral join, where the tenant is a parameter that
-- PostgreSQL plans with the average number of works per tenant. When one tenant holds most works (the large data
-- set: 200,000 works, all in one tenant), ANALYZE finds one distinct tenant_id, the average is every work, and the
-- planner walks works_pkey backwards through all of them for each tenant of the page (1.8 s per page of the
-- heavy user's tenants). A multi-tenant service plans for many tenants: tell it so (n_distinct: 5% of the rows).
-- Values it knows (a tenant in the most-common-values list) keep their own estimate.
ALTER TABLE "works" ALTER COLUMN "tenant_id" SET (n_distinct = -0.05);

-- Hand-written: the triggers that keep the counts, and `recount_rows()`, which rebuilds them from the rows.
--
-- Statement-level triggers with transition tables: one INSERT, UPDATE or DELETE of any number of rows adds its
-- net change to each counter row it touches, once, in the same statement (a bulk load of a million requests is one
-- counter update, not a million). Inserts upsert the counter row (its parent exists: the foreign key just said so);
-- updates and deletes only update it, so a cascade from a deleted parent never re-creates one. Counter rows are
-- taken in key order, so two statements touching the same counters cannot deadlock on them.

CREATE FUNCTION count_memberships() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO tenant_counts AS c (tenant_id, members)
    SELECT tenant_id, count(*) FROM new_rows GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE SET members = c.members + excluded.members;
    INSERT INTO user_counts AS c (user_id, memberships)
    SELECT user_id, count(*) FROM new_rows GROUP BY user_id ORDER BY user_id
    ON CONFLICT (user_id) DO UPDATE SET memberships = c.memberships + excluded.memberships;
  ELSE
    UPDATE tenant_counts c SET members = c.members - d.n
    FROM (SELECT tenant_id, count(*) AS n FROM old_rows GROUP BY tenant_id ORDER BY tenant_id) d
    WHERE c.tenant_id = d.tenant_id;
    UPDATE user_counts c SET memberships = c.memberships - d.n
    FROM (SELECT user_id, count(*) AS n FROM old_rows GROUP BY user_id ORDER BY user_id) d
    WHERE c.user_id = d.user_id;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION count_api_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO user_counts AS c (user_id, api_keys)
    SELECT user_id, count(*) FROM new_rows GROUP BY user_id ORDER BY user_id
    ON CONFLICT (user_id) DO UPDATE SET api_keys = c.api_keys + excluded.api_keys;
  ELSE
    UPDATE user_counts c SET api_keys = c.api_keys - d.n
    FROM (SELECT user_id, count(*) AS n FROM old_rows GROUP BY user_id ORDER BY user_id) d
    WHERE c.user_id = d.user_id;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION count_webhook_endpoints() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO tenant_counts AS c (tenant_id, webhook_endpoints)
    SELECT tenant_id, count(*) FROM new_rows GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE SET webhook_endpoints = c.webhook_endpoints + excluded.webhook_endpoints;
  ELSE
    UPDATE tenant_counts c SET webhook_endpoints = c.webhook_endpoints - d.n
    FROM (SELECT tenant_id, count(*) AS n FROM old_rows GROUP BY tenant_id ORDER BY tenant_id) d
    WHERE c.tenant_id = d.tenant_id;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION count_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO webhook_endpoint_counts AS c (endpoint_id, deliveries)
    SELECT endpoint_id, count(*) FROM new_rows GROUP BY endpoint_id ORDER BY endpoint_id
    ON CONFLICT (endpoint_id) DO UPDATE SET deliveries = c.deliveries + excluded.deliveries;
  ELSE
    UPDATE webhook_endpoint_counts c SET deliveries = c.deliveries - d.n
    FROM (SELECT endpoint_id, count(*) AS n FROM old_rows GROUP BY endpoint_id ORDER BY endpoint_id) d
    WHERE c.endpoint_id = d.endpoint_id;
  END IF;
  RETURN NULL;
END $$;

-- Works: kept and discarded per tenant (an UPDATE counts when it discards or restores), and the work slug counters.
CREATE FUNCTION count_works() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO tenant_counts AS c (tenant_id, kept_works, discarded_works)
    SELECT tenant_id, count(*) FILTER (WHERE discarded_at IS NULL), count(*) FILTER (WHERE discarded_at IS NOT NULL)
    FROM new_rows GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id) DO UPDATE
      SET kept_works = c.kept_works + excluded.kept_works, discarded_works = c.discarded_works + excluded.discarded_works;
    INSERT INTO work_slug_counters AS c (tenant_id, base, last_number)
    SELECT tenant_id, m[1], max(m[2]::int) FROM new_rows, regexp_match(slug, '^(.+)-([0-9]{1,9})$') AS m
    WHERE m IS NOT NULL AND m[2]::int >= 2 GROUP BY tenant_id, m[1] ORDER BY tenant_id, m[1]
    ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = greatest(c.last_number, excluded.last_number);
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE tenant_counts c SET kept_works = c.kept_works + d.kept, discarded_works = c.discarded_works - d.kept
    FROM (SELECT tenant_id, sum(kept) AS kept
          FROM (SELECT tenant_id, (discarded_at IS NULL)::int AS kept FROM new_rows
                UNION ALL SELECT tenant_id, -(discarded_at IS NULL)::int FROM old_rows) x
          GROUP BY tenant_id HAVING sum(kept) <> 0 ORDER BY tenant_id) d
    WHERE c.tenant_id = d.tenant_id;
  ELSE
    UPDATE tenant_counts c SET kept_works = c.kept_works - d.kept, discarded_works = c.discarded_works - d.discarded
    FROM (SELECT tenant_id, count(*) FILTER (WHERE discarded_at IS NULL) AS kept,
                 count(*) FILTER (WHERE discarded_at IS NOT NULL) AS discarded
          FROM old_rows GROUP BY tenant_id ORDER BY tenant_id) d
    WHERE c.tenant_id = d.tenant_id;
  END IF;
  RETURN NULL;
END $$;

-- Requests: per work and status (an UPDATE counts when it changes the status).
CREATE FUNCTION count_requests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO work_counts AS c (work_id, pending, confirmed, validated, cancelled)
    SELECT work_id, count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'confirmed'),
           count(*) FILTER (WHERE status = 'validated'), count(*) FILTER (WHERE status = 'cancelled')
    FROM new_rows GROUP BY work_id ORDER BY work_id
    ON CONFLICT (work_id) DO UPDATE
      SET pending = c.pending + excluded.pending, confirmed = c.confirmed + excluded.confirmed,
          validated = c.validated + excluded.validated, cancelled = c.cancelled + excluded.cancelled;
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE work_counts c SET pending = c.pending + d.pending, confirmed = c.confirmed + d.confirmed,
                             validated = c.validated + d.validated, cancelled = c.cancelled + d.cancelled
    FROM (SELECT work_id, sum(sign * (status = 'pending')::int) AS pending,
                 sum(sign * (status = 'confirmed')::int) AS confirmed,
                 sum(sign * (status = 'validated')::int) AS validated,
                 sum(sign * (status = 'cancelled')::int) AS cancelled
          FROM (SELECT work_id, status, -1 AS sign FROM old_rows UNION ALL SELECT work_id, status, 1 FROM new_rows) x
          GROUP BY work_id ORDER BY work_id) d
    WHERE c.work_id = d.work_id AND (d.pending, d.confirmed, d.validated, d.cancelled) <> (0, 0, 0, 0);
  ELSE
    UPDATE work_counts c SET pending = c.pending + d.pending, confirmed = c.confirmed + d.confirmed,
                             validated = c.validated + d.validated, cancelled = c.cancelled + d.cancelled
    FROM (SELECT work_id, sum(sign * (status = 'pending')::int) AS pending,
                 sum(sign * (status = 'confirmed')::int) AS confirmed,
                 sum(sign * (status = 'validated')::int) AS validated,
                 sum(sign * (status = 'cancelled')::int) AS cancelled
          FROM (SELECT work_id, status, -1 AS sign FROM old_rows) x
          GROUP BY work_id ORDER BY work_id) d
    WHERE c.work_id = d.work_id AND (d.pending, d.confirmed, d.validated, d.cancelled) <> (0, 0, 0, 0);
  END IF;
  RETURN NULL;
END $$;

-- Tenant slugs: the highest number taken after each base, whoever inserted the row.
CREATE FUNCTION count_tenant_slugs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tenant_slug_counters AS c (base, last_number)
  SELECT m[1], max(m[2]::int) FROM new_rows, regexp_match(slug, '^(.+)-([0-9]{1,9})$') AS m
  WHERE m IS NOT NULL AND m[2]::int >= 2 GROUP BY m[1] ORDER BY m[1]
  ON CONFLICT (base) DO UPDATE SET last_number = greatest(c.last_number, excluded.last_number);
  RETURN NULL;
END $$;

CREATE TRIGGER memberships_counted_insert AFTER INSERT ON memberships REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_memberships();
CREATE TRIGGER memberships_counted_delete AFTER DELETE ON memberships REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_memberships();
CREATE TRIGGER api_keys_counted_insert AFTER INSERT ON api_keys REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_api_keys();
CREATE TRIGGER api_keys_counted_delete AFTER DELETE ON api_keys REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_api_keys();
CREATE TRIGGER webhook_endpoints_counted_insert AFTER INSERT ON webhook_endpoints REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_endpoints();
CREATE TRIGGER webhook_endpoints_counted_delete AFTER DELETE ON webhook_endpoints REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_endpoints();
CREATE TRIGGER webhook_deliveries_counted_insert AFTER INSERT ON webhook_deliveries REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_deliveries();
CREATE TRIGGER webhook_deliveries_counted_delete AFTER DELETE ON webhook_deliveries REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_deliveries();
CREATE TRIGGER works_counted_insert AFTER INSERT ON works REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_works();
CREATE TRIGGER works_counted_update AFTER UPDATE ON works REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_works();
CREATE TRIGGER works_counted_delete AFTER DELETE ON works REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_works();
CREATE TRIGGER requests_counted_insert AFTER INSERT ON requests REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_requests();
CREATE TRIGGER requests_counted_update AFTER UPDATE ON requests REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_requests();
CREATE TRIGGER requests_counted_delete AFTER DELETE ON requests REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_requests();
CREATE TRIGGER tenants_slugs_counted AFTER INSERT ON tenants REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_tenant_slugs();

-- Rebuilds every counter from the rows it counts and returns how many counter rows were wrong (0 on a healthy
-- database). Holds off writers of the counted tables while it runs (SHARE locks; readers go on), so the counts
-- it writes are exact. Run after a restore and by `pnpm db:recount`; the first run below fills the counters of
-- the rows that exist before this migration.
CREATE FUNCTION recount_rows() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  fixed integer := 0;
  n integer;
BEGIN
  LOCK TABLE memberships, api_keys, webhook_endpoints, webhook_deliveries, works, requests, tenants IN SHARE MODE;

  WITH fresh AS (
    SELECT user_id, sum(m)::int AS memberships, sum(k)::int AS api_keys
    FROM (SELECT user_id, 1 AS m, 0 AS k FROM memberships UNION ALL SELECT user_id, 0, 1 FROM api_keys) x
    GROUP BY user_id),
  set_fresh AS (
    INSERT INTO user_counts AS c SELECT * FROM fresh
    ON CONFLICT (user_id) DO UPDATE SET memberships = excluded.memberships, api_keys = excluded.api_keys
      WHERE (c.memberships, c.api_keys) IS DISTINCT FROM (excluded.memberships, excluded.api_keys)
    RETURNING 1),
  set_zero AS (
    UPDATE user_counts c SET memberships = 0, api_keys = 0
    WHERE (c.memberships, c.api_keys) <> (0, 0) AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.user_id = c.user_id)
    RETURNING 1)
  SELECT (SELECT count(*) FROM set_fresh) + (SELECT count(*) FROM set_zero) INTO n;
  fixed := fixed + n;

  WITH fresh AS (
    SELECT tenant_id, sum(kept)::int AS kept_works, sum(discarded)::int AS discarded_works, sum(m)::int AS members,
           sum(e)::int AS webhook_endpoints
    FROM (SELECT tenant_id, (discarded_at IS NULL)::int AS kept, (discarded_at IS NOT NULL)::int AS discarded,
                 0 AS m, 0 AS e FROM works
          UNION ALL SELECT tenant_id, 0, 0, 1, 0 FROM memberships
          UNION ALL SELECT tenant_id, 0, 0, 0, 1 FROM webhook_endpoints) x
    GROUP BY tenant_id),
  set_fresh AS (
    INSERT INTO tenant_counts AS c SELECT * FROM fresh
    ON CONFLICT (tenant_id) DO UPDATE SET kept_works = excluded.kept_works, discarded_works = excluded.discarded_works,
      members = excluded.members, webhook_endpoints = excluded.webhook_endpoints
      WHERE (c.kept_works, c.discarded_works, c.members, c.webhook_endpoints) IS DISTINCT FROM
            (excluded.kept_works, excluded.discarded_works, excluded.members, excluded.webhook_endpoints)
    RETURNING 1),
  set_zero AS (
    UPDATE tenant_counts c SET kept_works = 0, discarded_works = 0, members = 0, webhook_endpoints = 0
    WHERE (c.kept_works, c.discarded_works, c.members, c.webhook_endpoints) <> (0, 0, 0, 0)
      AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.tenant_id = c.tenant_id)
    RETURNING 1)
  SELECT (SELECT count(*) FROM set_fresh) + (SELECT count(*) FROM set_zero) INTO n;
  fixed := fixed + n;

  WITH fresh AS (
    SELECT work_id, count(*) FILTER (WHERE status = 'pending')::int AS pending,
           count(*) FILTER (WHERE status = 'confirmed')::int AS confirmed,
           count(*) FILTER (WHERE status = 'validated')::int AS validated,
           count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled
    FROM requests GROUP BY work_id),
  set_fresh AS (
    INSERT INTO work_counts AS c SELECT * FROM fresh
    ON CONFLICT (work_id) DO UPDATE SET pending = excluded.pending, confirmed = excluded.confirmed,
      validated = excluded.validated, cancelled = excluded.cancelled
      WHERE (c.pending, c.confirmed, c.validated, c.cancelled) IS DISTINCT FROM
            (excluded.pending, excluded.confirmed, excluded.validated, excluded.cancelled)
    RETURNING 1),
  set_zero AS (
    UPDATE work_counts c SET pending = 0, confirmed = 0, validated = 0, cancelled = 0
    WHERE (c.pending, c.confirmed, c.validated, c.cancelled) <> (0, 0, 0, 0)
      AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.work_id = c.work_id)
    RETURNING 1)
  SELECT (SELECT count(*) FROM set_fresh) + (SELECT count(*) FROM set_zero) INTO n;
  fixed := fixed + n;

  WITH fresh AS (SELECT endpoint_id, count(*)::int AS deliveries FROM webhook_deliveries GROUP BY endpoint_id),
  set_fresh AS (
    INSERT INTO webhook_endpoint_counts AS c SELECT * FROM fresh
    ON CONFLICT (endpoint_id) DO UPDATE SET deliveries = excluded.deliveries
      WHERE c.deliveries IS DISTINCT FROM excluded.deliveries
    RETURNING 1),
  set_zero AS (
    UPDATE webhook_endpoint_counts c SET deliveries = 0
    WHERE c.deliveries <> 0 AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.endpoint_id = c.endpoint_id)
    RETURNING 1)
  SELECT (SELECT count(*) FROM set_fresh) + (SELECT count(*) FROM set_zero) INTO n;
  fixed := fixed + n;

  -- Slug counters only ever go up: a number handed out and not used (its creation failed) is not handed out again.
  WITH fresh AS (
    SELECT m[1] AS base, max(m[2]::int) AS last_number FROM tenants, regexp_match(slug, '^(.+)-([0-9]{1,9})$') AS m
    WHERE m IS NOT NULL AND m[2]::int >= 2 GROUP BY m[1]),
  raised AS (
    INSERT INTO tenant_slug_counters AS c SELECT * FROM fresh
    ON CONFLICT (base) DO UPDATE SET last_number = excluded.last_number WHERE c.last_number < excluded.last_number
    RETURNING 1)
  SELECT count(*) FROM raised INTO n;
  fixed := fixed + n;

  WITH fresh AS (
    SELECT tenant_id, m[1] AS base, max(m[2]::int) AS last_number
    FROM works, regexp_match(slug, '^(.+)-([0-9]{1,9})$') AS m
    WHERE m IS NOT NULL AND m[2]::int >= 2 GROUP BY tenant_id, m[1]),
  raised AS (
    INSERT INTO work_slug_counters AS c SELECT * FROM fresh
    ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = excluded.last_number
      WHERE c.last_number < excluded.last_number
    RETURNING 1)
  SELECT count(*) FROM raised INTO n;
  fixed := fixed + n;

  RETURN fixed;
END $$;

SELECT recount_rows();
