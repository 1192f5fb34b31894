CREATE OR REPLACE FUNCTION public.count_work_slug()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO work_slug_counters AS c (tenant_id, base, last_number)
  SELECT NEW.tenant_id, m[1], m[2]::int FROM regexp_match(NEW.slug, '^(.+)-([0-9]{1,9})$') AS m
  WHERE m[2]::int >= 2
  ON CONFLICT (tenant_id, base) DO UPDATE SET last_number = excluded.last_number WHERE c.last_number < excluded.last_number;
  RETURN NULL;
END $function$;
