CREATE OR REPLACE FUNCTION public.count_works()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO tenant_counts AS c (tenant_id, slot, kept_works, discarded_works)
    SELECT tenant_id, counter_slot(), count(*) FILTER (WHERE discarded_at IS NULL),
           count(*) FILTER (WHERE discarded_at IS NOT NULL)
    FROM new_rows GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id, slot) DO UPDATE
      SET kept_works = c.kept_works + excluded.kept_works, discarded_works = c.discarded_works + excluded.discarded_works;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO tenant_counts AS c (tenant_id, slot, kept_works, discarded_works)
    SELECT tenant_id, counter_slot(), d.kept, -d.kept
    FROM (SELECT tenant_id, sum(kept)::int AS kept
          FROM (SELECT tenant_id, (discarded_at IS NULL)::int AS kept FROM new_rows
                UNION ALL SELECT tenant_id, -(discarded_at IS NULL)::int FROM old_rows) x
          GROUP BY tenant_id HAVING sum(kept) <> 0 ORDER BY tenant_id) d
    ON CONFLICT (tenant_id, slot) DO UPDATE
      SET kept_works = c.kept_works + excluded.kept_works, discarded_works = c.discarded_works + excluded.discarded_works;
  ELSE
    UPDATE tenant_counts c SET kept_works = c.kept_works - d.kept, discarded_works = c.discarded_works - d.discarded
    FROM (SELECT tenant_id, count(*) FILTER (WHERE discarded_at IS NULL) AS kept,
                 count(*) FILTER (WHERE discarded_at IS NOT NULL) AS discarded
          FROM old_rows GROUP BY tenant_id ORDER BY tenant_id) d
    WHERE c.tenant_id = d.tenant_id AND c.slot = (SELECT min(slot) FROM tenant_counts m WHERE m.tenant_id = d.tenant_id);
  END IF;
  RETURN NULL;
END $function$;
