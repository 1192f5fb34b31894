CREATE OR REPLACE FUNCTION public.count_webhook_endpoints()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO tenant_counts AS c (tenant_id, slot, webhook_endpoints)
    SELECT tenant_id, counter_slot(), count(*) FROM new_rows GROUP BY tenant_id ORDER BY tenant_id
    ON CONFLICT (tenant_id, slot) DO UPDATE SET webhook_endpoints = c.webhook_endpoints + excluded.webhook_endpoints;
  ELSE
    UPDATE tenant_counts c SET webhook_endpoints = c.webhook_endpoints - d.n
    FROM (SELECT tenant_id, count(*) AS n FROM old_rows GROUP BY tenant_id ORDER BY tenant_id) d
    WHERE c.tenant_id = d.tenant_id AND c.slot = (SELECT min(slot) FROM tenant_counts m WHERE m.tenant_id = d.tenant_id);
  END IF;
  RETURN NULL;
END $function$;
