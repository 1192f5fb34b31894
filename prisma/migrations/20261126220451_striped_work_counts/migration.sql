-- AlterTable
ALTER TABLE "work_counts" DROP CONSTRAINT "work_counts_pkey",
ADD COLUMN     "slot" SMALLINT NOT NULL DEFAULT 0,
ADD CONSTRAINT "work_counts_pkey" PRIMARY KEY ("work_id", "slot");

-- Hand-written: the work counts are striped (issue: writes into one work queued on its one counter row). The
-- trigger adds each statement's change to the slot of the session that runs it, `counter_slot()`: the pool's
-- connections mostly write different rows of one work, and a read sums at most 16 rows. Deletes (a work or tenant
-- going away, cascading) only update a row that exists, the work's lowest slot, so none is made for a work that
-- is being deleted.
CREATE FUNCTION counter_slot() RETURNS smallint LANGUAGE sql STABLE AS $$ SELECT (pg_backend_pid() % 16)::smallint $$;

CREATE OR REPLACE FUNCTION count_requests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO work_counts AS c (work_id, slot, pending, confirmed, validated, cancelled)
    SELECT work_id, counter_slot(), count(*) FILTER (WHERE status = 'pending'),
           count(*) FILTER (WHERE status = 'confirmed'), count(*) FILTER (WHERE status = 'validated'),
           count(*) FILTER (WHERE status = 'cancelled')
    FROM new_rows GROUP BY work_id ORDER BY work_id
    ON CONFLICT (work_id, slot) DO UPDATE
      SET pending = c.pending + excluded.pending, confirmed = c.confirmed + excluded.confirmed,
          validated = c.validated + excluded.validated, cancelled = c.cancelled + excluded.cancelled;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO work_counts AS c (work_id, slot, pending, confirmed, validated, cancelled)
    SELECT work_id, counter_slot(), d.pending, d.confirmed, d.validated, d.cancelled
    FROM (SELECT work_id, sum(sign * (status = 'pending')::int)::int AS pending,
                 sum(sign * (status = 'confirmed')::int)::int AS confirmed,
                 sum(sign * (status = 'validated')::int)::int AS validated,
                 sum(sign * (status = 'cancelled')::int)::int AS cancelled
          FROM (SELECT work_id, status, -1 AS sign FROM old_rows UNION ALL SELECT work_id, status, 1 FROM new_rows) x
          GROUP BY work_id ORDER BY work_id) d
    WHERE (d.pending, d.confirmed, d.validated, d.cancelled) <> (0, 0, 0, 0)
    ON CONFLICT (work_id, slot) DO UPDATE
      SET pending = c.pending + excluded.pending, confirmed = c.confirmed + excluded.confirmed,
          validated = c.validated + excluded.validated, cancelled = c.cancelled + excluded.cancelled;
  ELSE
    UPDATE work_counts c SET pending = c.pending + d.pending, confirmed = c.confirmed + d.confirmed,
                             validated = c.validated + d.validated, cancelled = c.cancelled + d.cancelled
    FROM (SELECT work_id, sum(sign * (status = 'pending')::int) AS pending,
                 sum(sign * (status = 'confirmed')::int) AS confirmed,
                 sum(sign * (status = 'validated')::int) AS validated,
                 sum(sign * (status = 'cancelled')::int) AS cancelled
          FROM (SELECT work_id, status, -1 AS sign FROM old_rows) x
          GROUP BY work_id ORDER BY work_id) d
    WHERE c.work_id = d.work_id AND (d.pending, d.confirmed, d.validated, d.cancelled) <> (0, 0, 0, 0)
      AND c.slot = (SELECT min(slot) FROM work_counts m WHERE m.work_id = d.work_id);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION recount_rows() RETURNS integer LANGUAGE plpgsql AS $$
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

  -- Work counts are striped: a work's count is the sum of its slots. A work whose sum is wrong gets the right
  -- figures in its lowest slot and 0 in the others (or one slot, 0, when it has none).
  WITH fresh AS (
    SELECT work_id, count(*) FILTER (WHERE status = 'pending')::int AS pending,
           count(*) FILTER (WHERE status = 'confirmed')::int AS confirmed,
           count(*) FILTER (WHERE status = 'validated')::int AS validated,
           count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled
    FROM requests GROUP BY work_id),
  summed AS (
    SELECT work_id, min(slot) AS first_slot, sum(pending)::int AS pending, sum(confirmed)::int AS confirmed,
           sum(validated)::int AS validated, sum(cancelled)::int AS cancelled
    FROM work_counts GROUP BY work_id),
  wrong AS (
    SELECT coalesce(f.work_id, s.work_id) AS work_id, s.first_slot, coalesce(f.pending, 0) AS pending,
           coalesce(f.confirmed, 0) AS confirmed, coalesce(f.validated, 0) AS validated,
           coalesce(f.cancelled, 0) AS cancelled
    FROM fresh f FULL JOIN summed s ON s.work_id = f.work_id
    WHERE (coalesce(f.pending, 0), coalesce(f.confirmed, 0), coalesce(f.validated, 0), coalesce(f.cancelled, 0))
          IS DISTINCT FROM (coalesce(s.pending, 0), coalesce(s.confirmed, 0), coalesce(s.validated, 0),
                            coalesce(s.cancelled, 0))),
  set_existing AS (
    UPDATE work_counts c
    SET pending = CASE WHEN c.slot = w.first_slot THEN w.pending ELSE 0 END,
        confirmed = CASE WHEN c.slot = w.first_slot THEN w.confirmed ELSE 0 END,
        validated = CASE WHEN c.slot = w.first_slot THEN w.validated ELSE 0 END,
        cancelled = CASE WHEN c.slot = w.first_slot THEN w.cancelled ELSE 0 END
    FROM wrong w WHERE c.work_id = w.work_id
    RETURNING 1),
  set_new AS (
    INSERT INTO work_counts (work_id, slot, pending, confirmed, validated, cancelled)
    SELECT work_id, 0, pending, confirmed, validated, cancelled FROM wrong WHERE first_slot IS NULL
    RETURNING 1)
  SELECT count(*) FROM wrong INTO n;
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

