-- Hand-written: as the previous migration did for tenants, a work slug's base counter is raised by a row-level
-- trigger that runs only for a slug ending in a number; the works' count trigger no longer runs the slug
-- statement (a regular-expression scan of the inserted rows, and an upsert that inserts nothing for most slugs) on
-- every work created. The counts themselves are unchanged (the striped_tenant_counts migration's count_works,
-- without its slug part).
CREATE OR REPLACE FUNCTION count_works() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$;

CREATE FUNCTION count_work_slug() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO work_slug_counters AS c (tenant_id, base, last_number)
  SELECT NEW.tenant_id, m[1], m[2]::int FROM regexp_match(NEW.slug, '^(.+)-([0-9]{1,9})$') AS m
  WHERE m[2]::int >= 2
  ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = excluded.last_number WHERE c.last_number < excluded.last_number;
  RETURN NULL;
END $$;

CREATE TRIGGER works_slugs_counted AFTER INSERT ON works FOR EACH ROW
  WHEN (NEW.slug ~ '.-[0-9]{1,9}$') EXECUTE FUNCTION count_work_slug();
