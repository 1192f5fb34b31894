CREATE OR REPLACE FUNCTION public.count_new_tenant(p_owner uuid, p_cap integer)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_owned bigint;
BEGIN
  BEGIN
    INSERT INTO user_counts AS c (user_id, slot, owned_tenants, memberships)
    VALUES (p_owner, counter_slot() % 15 + 1, 1, 1)
    ON CONFLICT (user_id, slot) DO UPDATE
      SET owned_tenants = c.owned_tenants + 1, memberships = c.memberships + 1;
    SELECT coalesce(sum(owned_tenants), 0) INTO v_owned FROM user_counts WHERE user_id = p_owner;
    IF v_owned + 14 <= p_cap THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'near the tenant cap' USING ERRCODE = 'WA010';
  EXCEPTION WHEN SQLSTATE 'WA010' THEN
    NULL;
  END;

  INSERT INTO user_counts (user_id, slot) SELECT p_owner, s::smallint FROM generate_series(0, 15) s
  ON CONFLICT (user_id, slot) DO NOTHING;
  PERFORM 1 FROM user_counts WHERE user_id = p_owner ORDER BY slot FOR UPDATE;
  SELECT coalesce(sum(owned_tenants), 0) INTO v_owned FROM user_counts WHERE user_id = p_owner;
  IF v_owned >= p_cap THEN
    RETURN false;
  END IF;
  UPDATE user_counts SET owned_tenants = owned_tenants + 1, memberships = memberships + 1
  WHERE user_id = p_owner AND slot = 0;
  RETURN true;
END $function$;
