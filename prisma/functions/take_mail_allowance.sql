CREATE OR REPLACE FUNCTION public.take_mail_allowance(p_tenant uuid, p_email text, p_day date, p_new_id uuid, p_per_recipient integer, p_per_tenant integer)
 RETURNS boolean
 LANGUAGE sql
AS $function$
  SELECT take_mail_allowance(p_tenant, NULL::uuid, p_email, p_day, p_new_id, p_per_recipient, p_per_tenant, 50,
                             NULL::int, true)
$function$;
CREATE OR REPLACE FUNCTION public.take_mail_allowance(p_tenant uuid, p_sender uuid, p_email text, p_day date, p_new_id uuid, p_per_recipient integer, p_per_tenant integer, p_per_address integer, p_per_sender integer, p_stoppable boolean)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_email text := canonical_email(p_email);
  v_stopped boolean;
BEGIN
  IF p_tenant IS NOT NULL THEN
    INSERT INTO mail_recipients AS r (tenant_id, email, id, day, sent)
    SELECT p_tenant, v_email, p_new_id, p_day, 1 WHERE p_per_recipient >= 1
    ON CONFLICT (tenant_id, email) DO UPDATE
    SET day = p_day, sent = CASE WHEN r.day = p_day THEN r.sent + 1 ELSE 1 END
    WHERE (r.stopped_at IS NULL OR NOT p_stoppable) AND (r.day <> p_day OR r.sent < p_per_recipient);
    IF NOT FOUND THEN
      SELECT r.stopped_at IS NOT NULL INTO v_stopped
      FROM mail_recipients r WHERE r.tenant_id = p_tenant AND r.email = v_email;
      IF v_stopped AND p_stoppable THEN
        RETURN true;
      END IF;
      RAISE EXCEPTION 'recipient_email_limit_reached' USING ERRCODE = 'WA001';
    END IF;
  END IF;

  INSERT INTO mail_addresses AS a (email, day, sent)
  SELECT v_email, p_day, 1 WHERE p_per_address >= 1
  ON CONFLICT (email) DO UPDATE
  SET day = p_day, sent = CASE WHEN a.day = p_day THEN a.sent + 1 ELSE 1 END
  WHERE (a.stopped_at IS NULL OR NOT p_stoppable) AND (a.day <> p_day OR a.sent < p_per_address);
  IF NOT FOUND THEN
    SELECT a.stopped_at IS NOT NULL INTO v_stopped FROM mail_addresses a WHERE a.email = v_email;
    IF v_stopped AND p_stoppable THEN
      IF p_tenant IS NOT NULL THEN
        UPDATE mail_recipients r SET sent = r.sent - 1 WHERE r.tenant_id = p_tenant AND r.email = v_email;
      END IF;
      RETURN true;
    END IF;
    RAISE EXCEPTION 'address_email_limit_reached' USING ERRCODE = 'WA003';
  END IF;

  IF p_tenant IS NOT NULL THEN
    PERFORM take_tenant_mail_budget(p_tenant, p_day, p_per_tenant);
  END IF;
  IF p_sender IS NOT NULL THEN
    PERFORM take_user_mail_budget(p_sender, p_day, p_per_sender);
  END IF;
  RETURN false;
END
$function$;
