CREATE OR REPLACE FUNCTION public.count_requests()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
END $function$;
