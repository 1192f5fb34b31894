CREATE OR REPLACE FUNCTION public.recount_rows()
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  fixed integer := 0;
  n integer;
BEGIN
  LOCK TABLE memberships, api_keys, webhook_endpoints, webhook_deliveries, works, requests, tenants IN SHARE MODE;

  -- User counts are striped like tenant counts: a user whose sums are wrong gets the right figures in their lowest
  -- slot and 0 in the others (or one slot, 0, when they have none). A user's owned tenants are the tenants whose
  -- owner they are.
  WITH fresh AS (
    SELECT user_id, sum(m)::int AS memberships, sum(k)::int AS api_keys, sum(o)::int AS owned_tenants
    FROM (SELECT user_id, 1 AS m, 0 AS k, 0 AS o FROM memberships
          UNION ALL SELECT user_id, 0, 1, 0 FROM api_keys
          UNION ALL SELECT owner_id, 0, 0, 1 FROM tenants) x
    GROUP BY user_id),
  summed AS (
    SELECT user_id, min(slot) AS first_slot, sum(memberships)::int AS memberships, sum(api_keys)::int AS api_keys,
           sum(owned_tenants)::int AS owned_tenants
    FROM user_counts GROUP BY user_id),
  wrong AS (
    SELECT coalesce(f.user_id, s.user_id) AS user_id, s.first_slot, coalesce(f.memberships, 0) AS memberships,
           coalesce(f.api_keys, 0) AS api_keys, coalesce(f.owned_tenants, 0) AS owned_tenants
    FROM fresh f FULL JOIN summed s ON s.user_id = f.user_id
    WHERE (coalesce(f.memberships, 0), coalesce(f.api_keys, 0), coalesce(f.owned_tenants, 0))
          IS DISTINCT FROM (coalesce(s.memberships, 0), coalesce(s.api_keys, 0), coalesce(s.owned_tenants, 0))),
  set_existing AS (
    UPDATE user_counts c
    SET memberships = CASE WHEN c.slot = w.first_slot THEN w.memberships ELSE 0 END,
        api_keys = CASE WHEN c.slot = w.first_slot THEN w.api_keys ELSE 0 END,
        owned_tenants = CASE WHEN c.slot = w.first_slot THEN w.owned_tenants ELSE 0 END
    FROM wrong w WHERE c.user_id = w.user_id
    RETURNING 1),
  set_new AS (
    INSERT INTO user_counts (user_id, slot, memberships, api_keys, owned_tenants)
    SELECT user_id, 0, memberships, api_keys, owned_tenants FROM wrong WHERE first_slot IS NULL
    RETURNING 1)
  SELECT count(*) FROM wrong INTO n;
  fixed := fixed + n;

  -- Tenant counts are striped like work counts: a tenant whose sums are wrong gets the right figures in its lowest
  -- slot and 0 in the others (or one slot, 0, when it has none).
  WITH fresh AS (
    SELECT tenant_id, sum(kept)::int AS kept_works, sum(discarded)::int AS discarded_works, sum(m)::int AS members,
           sum(e)::int AS webhook_endpoints
    FROM (SELECT tenant_id, (discarded_at IS NULL)::int AS kept, (discarded_at IS NOT NULL)::int AS discarded,
                 0 AS m, 0 AS e FROM works
          UNION ALL SELECT tenant_id, 0, 0, 1, 0 FROM memberships
          UNION ALL SELECT tenant_id, 0, 0, 0, 1 FROM webhook_endpoints) x
    GROUP BY tenant_id),
  summed AS (
    SELECT tenant_id, min(slot) AS first_slot, sum(kept_works)::int AS kept_works,
           sum(discarded_works)::int AS discarded_works, sum(members)::int AS members,
           sum(webhook_endpoints)::int AS webhook_endpoints
    FROM tenant_counts GROUP BY tenant_id),
  wrong AS (
    SELECT coalesce(f.tenant_id, s.tenant_id) AS tenant_id, s.first_slot, coalesce(f.kept_works, 0) AS kept_works,
           coalesce(f.discarded_works, 0) AS discarded_works, coalesce(f.members, 0) AS members,
           coalesce(f.webhook_endpoints, 0) AS webhook_endpoints
    FROM fresh f FULL JOIN summed s ON s.tenant_id = f.tenant_id
    WHERE (coalesce(f.kept_works, 0), coalesce(f.discarded_works, 0), coalesce(f.members, 0),
           coalesce(f.webhook_endpoints, 0))
          IS DISTINCT FROM (coalesce(s.kept_works, 0), coalesce(s.discarded_works, 0), coalesce(s.members, 0),
                            coalesce(s.webhook_endpoints, 0))),
  set_existing AS (
    UPDATE tenant_counts c
    SET kept_works = CASE WHEN c.slot = w.first_slot THEN w.kept_works ELSE 0 END,
        discarded_works = CASE WHEN c.slot = w.first_slot THEN w.discarded_works ELSE 0 END,
        members = CASE WHEN c.slot = w.first_slot THEN w.members ELSE 0 END,
        webhook_endpoints = CASE WHEN c.slot = w.first_slot THEN w.webhook_endpoints ELSE 0 END
    FROM wrong w WHERE c.tenant_id = w.tenant_id
    RETURNING 1),
  set_new AS (
    INSERT INTO tenant_counts (tenant_id, slot, kept_works, discarded_works, members, webhook_endpoints)
    SELECT tenant_id, 0, kept_works, discarded_works, members, webhook_endpoints FROM wrong WHERE first_slot IS NULL
    RETURNING 1)
  SELECT count(*) FROM wrong INTO n;
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
END $function$;
