CREATE OR REPLACE FUNCTION public.count_api_keys()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO user_counts AS c (user_id, slot, api_keys)
    SELECT user_id, counter_slot(), count(*) FROM new_rows GROUP BY user_id ORDER BY user_id
    ON CONFLICT (user_id, slot) DO UPDATE SET api_keys = c.api_keys + excluded.api_keys;
  ELSE
    UPDATE user_counts c SET api_keys = c.api_keys - d.n
    FROM (SELECT user_id, count(*) AS n FROM old_rows GROUP BY user_id ORDER BY user_id) d
    WHERE c.user_id = d.user_id AND c.slot = (SELECT min(slot) FROM user_counts m WHERE m.user_id = d.user_id);
  END IF;
  RETURN NULL;
END $function$;
