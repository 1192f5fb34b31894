CREATE OR REPLACE FUNCTION public.count_webhook_deliveries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
END $function$;
