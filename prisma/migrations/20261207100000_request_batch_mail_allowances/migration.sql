-- Hand-written (issue 41, bulk send): `take_mail_allowance` (migration mail_caps_across_tenants) for every email of
-- a batch of one tenant at once, with the same caps and answers: per canonical address within the tenant, per
-- canonical address across the service, the tenant's day and the sending user's day. Called once per email in one
-- statement, the function updated the tenant's one counter row once per email in one transaction: each update
-- leaves a version that the next one walks past, so a batch cost grew with its square (1,000 calls: 3.3 s; 2,000:
-- 9.7 s, measured). Here each address's rows are updated once with all of its emails of the batch (addresses in
-- order, so two batches lock them in the same order, and in the order a single email takes them), and the tenant's
-- and the sender's days once with all of them.
--
-- Returns, for each email in order, whether its address stopped these emails (the tenant's, or every email of the
-- service): nothing counted for it, as the single function's `true`. Raises WA001 (recipient cap), WA003 (address
-- cap; both with DETAIL: the first address over it, in item order, as given), WA002 (tenant budget) or WA004
-- (sender budget), and then nothing is counted: the caller's statement is undone.
--
-- The two budgets: a batch always takes their exact path (16 slots locked, their sum read, the batch's emails added
-- to slot 0). The fast path of a single email relies on every session having at most one email in flight that
-- others cannot see yet; a batch's would be up to 1,000. Single emails of the tenant (and of the sender) wait for
-- the slots while the batch's statement runs (its transaction, with an Idempotency-Key), no longer.
CREATE FUNCTION take_mail_allowances(
  p_tenant uuid, p_sender uuid, p_emails text[], p_day date, p_new_ids uuid[],
  p_per_recipient int, p_per_tenant int, p_per_address int, p_per_sender int
) RETURNS boolean[] LANGUAGE plpgsql AS $$
DECLARE
  v_canon text[] := ARRAY(SELECT canonical_email(e) FROM unnest(p_emails) WITH ORDINALITY AS u(e, ord) ORDER BY ord);
  v_taken text[];
  v_stopped text[];
  v_counted text[];
  v_refused int;
  v_count bigint;
  v_sent bigint;
BEGIN
  -- Within the tenant: each address's row once, with all its emails.
  WITH wanted AS (
    SELECT e.email, count(*)::int AS n, (array_agg(e.id ORDER BY e.ord))[1] AS id
    FROM unnest(v_canon, p_new_ids) WITH ORDINALITY AS e(email, id, ord)
    GROUP BY e.email),
  taken AS (
    INSERT INTO mail_recipients AS r (tenant_id, email, id, day, sent)
    SELECT p_tenant, w.email, w.id, p_day, w.n FROM wanted w WHERE w.n <= p_per_recipient ORDER BY w.email
    ON CONFLICT (tenant_id, email) DO UPDATE
    SET day = p_day, sent = CASE WHEN r.day = p_day THEN r.sent + EXCLUDED.sent ELSE EXCLUDED.sent END
    WHERE r.stopped_at IS NULL
      AND CASE WHEN r.day = p_day THEN r.sent + EXCLUDED.sent ELSE EXCLUDED.sent END <= p_per_recipient
    RETURNING r.email)
  SELECT coalesce(array_agg(email), '{}') INTO v_taken FROM taken;
  -- The addresses not taken: stopped (a fresh read: a row another transaction made meanwhile counts), or over.
  SELECT coalesce(array_agg(DISTINCT e.email) FILTER (WHERE r.stopped_at IS NOT NULL), '{}'),
         min(e.ord) FILTER (WHERE r.stopped_at IS NULL)
  INTO v_stopped, v_refused
  FROM unnest(v_canon) WITH ORDINALITY AS e(email, ord)
  LEFT JOIN mail_recipients r ON r.tenant_id = p_tenant AND r.email = e.email
  WHERE e.email <> ALL (v_taken);
  IF v_refused IS NOT NULL THEN
    RAISE EXCEPTION 'recipient_email_limit_reached' USING ERRCODE = 'WA001', DETAIL = p_emails[v_refused];
  END IF;

  -- Across the service: the addresses the tenant's caps took.
  WITH wanted AS (
    SELECT e.email, count(*)::int AS n FROM unnest(v_canon) AS e(email)
    WHERE e.email = ANY (v_taken) GROUP BY e.email),
  taken AS (
    INSERT INTO mail_addresses AS a (email, day, sent)
    SELECT w.email, p_day, w.n FROM wanted w WHERE w.n <= p_per_address ORDER BY w.email
    ON CONFLICT (email) DO UPDATE
    SET day = p_day, sent = CASE WHEN a.day = p_day THEN a.sent + EXCLUDED.sent ELSE EXCLUDED.sent END
    WHERE a.stopped_at IS NULL
      AND CASE WHEN a.day = p_day THEN a.sent + EXCLUDED.sent ELSE EXCLUDED.sent END <= p_per_address
    RETURNING a.email)
  SELECT coalesce(array_agg(email), '{}') INTO v_counted FROM taken;
  SELECT min(e.ord) FILTER (WHERE a.stopped_at IS NULL),
         coalesce(array_agg(DISTINCT e.email) FILTER (WHERE a.stopped_at IS NOT NULL), '{}')
  INTO v_refused, v_taken
  FROM unnest(v_canon) WITH ORDINALITY AS e(email, ord)
  LEFT JOIN mail_addresses a ON a.email = e.email
  WHERE e.email = ANY (v_taken) AND e.email <> ALL (v_counted);
  IF v_refused IS NOT NULL THEN
    RAISE EXCEPTION 'address_email_limit_reached' USING ERRCODE = 'WA003', DETAIL = p_emails[v_refused];
  END IF;
  -- Stopped across the service (v_taken now holds those): not counted within the tenant either.
  IF cardinality(v_taken) > 0 THEN
    UPDATE mail_recipients r SET sent = r.sent - s.n
    FROM (SELECT e.email, count(*)::int AS n FROM unnest(v_canon) AS e(email) WHERE e.email = ANY (v_taken)
          GROUP BY e.email) s
    WHERE r.tenant_id = p_tenant AND r.email = s.email;
    v_stopped := v_stopped || v_taken;
  END IF;

  SELECT count(*) INTO v_count FROM unnest(v_canon) AS e(email) WHERE e.email = ANY (v_counted);
  IF v_count > 0 THEN
    INSERT INTO tenant_mail_days (tenant_id, slot, day, sent)
    SELECT p_tenant, s::smallint, p_day, 0 FROM generate_series(0, 15) s
    ON CONFLICT (tenant_id, slot) DO NOTHING;
    PERFORM 1 FROM tenant_mail_days WHERE tenant_id = p_tenant ORDER BY slot FOR UPDATE;
    SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
    FROM tenant_mail_days WHERE tenant_id = p_tenant;
    IF v_sent + v_count > p_per_tenant THEN
      RAISE EXCEPTION 'tenant_email_budget_exhausted' USING ERRCODE = 'WA002';
    END IF;
    UPDATE tenant_mail_days t
    SET day = p_day, sent = CASE WHEN t.day = p_day THEN t.sent + v_count ELSE v_count END
    WHERE t.tenant_id = p_tenant AND t.slot = 0;

    IF p_sender IS NOT NULL THEN
      INSERT INTO user_mail_days (user_id, slot, day, sent)
      SELECT p_sender, s::smallint, p_day, 0 FROM generate_series(0, 15) s
      ON CONFLICT (user_id, slot) DO NOTHING;
      PERFORM 1 FROM user_mail_days WHERE user_id = p_sender ORDER BY slot FOR UPDATE;
      SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
      FROM user_mail_days WHERE user_id = p_sender;
      IF v_sent + v_count > p_per_sender THEN
        RAISE EXCEPTION 'sender_email_budget_exhausted' USING ERRCODE = 'WA004';
      END IF;
      UPDATE user_mail_days u
      SET day = p_day, sent = CASE WHEN u.day = p_day THEN u.sent + v_count ELSE v_count END
      WHERE u.user_id = p_sender AND u.slot = 0;
    END IF;
  END IF;

  RETURN ARRAY(SELECT e.email = ANY (v_stopped) FROM unnest(v_canon) WITH ORDINALITY AS e(email, ord) ORDER BY e.ord);
END
$$;
