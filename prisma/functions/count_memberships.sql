CREATE OR REPLACE FUNCTION public.count_memberships()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE tenant_counts c SET members = c.members - d.n
  FROM (SELECT tenant_id, count(*) AS n FROM old_rows GROUP BY tenant_id ORDER BY tenant_id) d
  WHERE c.tenant_id = d.tenant_id AND c.slot = (SELECT min(slot) FROM tenant_counts m WHERE m.tenant_id = d.tenant_id);
  UPDATE user_counts c SET memberships = c.memberships - d.n
  FROM (SELECT user_id, count(*) AS n FROM old_rows GROUP BY user_id ORDER BY user_id) d
  WHERE c.user_id = d.user_id AND c.slot = (SELECT min(slot) FROM user_counts m WHERE m.user_id = d.user_id);
  RETURN NULL;
END $function$;
