CREATE OR REPLACE FUNCTION public.take_user_mail_budget(p_user uuid, p_day date, p_per_sender integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_sent bigint;
  v_sessions int := current_setting('max_connections')::int;
BEGIN
  SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
  FROM user_mail_days WHERE user_id = p_user;
  IF v_sent + 2 * v_sessions <= p_per_sender THEN
    BEGIN
      INSERT INTO user_mail_days AS u (user_id, slot, day, sent)
      VALUES (p_user, counter_slot(), p_day, 1)
      ON CONFLICT (user_id, slot) DO UPDATE
      SET day = EXCLUDED.day, sent = CASE WHEN u.day = EXCLUDED.day THEN u.sent + 1 ELSE 1 END;
      SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
      FROM user_mail_days WHERE user_id = p_user;
      IF v_sent + v_sessions - 1 <= p_per_sender THEN
        RETURN;
      END IF;
      RAISE EXCEPTION 'near the sender email budget' USING ERRCODE = 'WA009';
    EXCEPTION WHEN SQLSTATE 'WA009' THEN
      NULL;
    END;
  END IF;

  INSERT INTO user_mail_days (user_id, slot, day, sent)
  SELECT p_user, s::smallint, p_day, 0 FROM generate_series(0, 15) s
  ON CONFLICT (user_id, slot) DO NOTHING;
  PERFORM 1 FROM user_mail_days WHERE user_id = p_user ORDER BY slot FOR UPDATE;
  SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
  FROM user_mail_days WHERE user_id = p_user;
  IF v_sent >= p_per_sender THEN
    RAISE EXCEPTION 'sender_email_budget_exhausted' USING ERRCODE = 'WA004';
  END IF;
  UPDATE user_mail_days u SET day = p_day, sent = CASE WHEN u.day = p_day THEN u.sent + 1 ELSE 1 END
  WHERE u.user_id = p_user AND u.slot = 0;
END
$function$;
