CREATE OR REPLACE FUNCTION public.take_tenant_mail_budget(p_tenant uuid, p_day date, p_per_tenant integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_sent bigint;
  v_sessions int := current_setting('max_connections')::int;
BEGIN
  SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
  FROM tenant_mail_days WHERE tenant_id = p_tenant;
  IF v_sent + 2 * v_sessions <= p_per_tenant THEN
    BEGIN
      INSERT INTO tenant_mail_days AS t (tenant_id, slot, day, sent)
      VALUES (p_tenant, counter_slot(), p_day, 1)
      ON CONFLICT (tenant_id, slot) DO UPDATE
      SET day = EXCLUDED.day, sent = CASE WHEN t.day = EXCLUDED.day THEN t.sent + 1 ELSE 1 END;
      SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
      FROM tenant_mail_days WHERE tenant_id = p_tenant;
      IF v_sent + v_sessions - 1 <= p_per_tenant THEN
        RETURN;
      END IF;
      RAISE EXCEPTION 'near the tenant email budget' USING ERRCODE = 'WA009';
    EXCEPTION WHEN SQLSTATE 'WA009' THEN
      NULL;
    END;
  END IF;

  INSERT INTO tenant_mail_days (tenant_id, slot, day, sent)
  SELECT p_tenant, s::smallint, p_day, 0 FROM generate_series(0, 15) s
  ON CONFLICT (tenant_id, slot) DO NOTHING;
  PERFORM 1 FROM tenant_mail_days WHERE tenant_id = p_tenant ORDER BY slot FOR UPDATE;
  SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
  FROM tenant_mail_days WHERE tenant_id = p_tenant;
  IF v_sent >= p_per_tenant THEN
    RAISE EXCEPTION 'tenant_email_budget_exhausted' USING ERRCODE = 'WA002';
  END IF;
  UPDATE tenant_mail_days t SET day = p_day, sent = CASE WHEN t.day = p_day THEN t.sent + 1 ELSE 1 END
  WHERE t.tenant_id = p_tenant AND t.slot = 0;
END
$function$;
