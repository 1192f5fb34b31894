-- Hand-written (issue 41, bulk send): `take_mail_allowance` (migration mail_slot_per_connection) for every email of
-- a batch at once, with the same caps and answers. Called once per email in one statement, the function updated the
-- tenant's one counter row once per email in one transaction: each update leaves a version that the next one walks
-- past, so a batch cost grew with its square (1,000 calls: 3.3 s; 2,000: 9.7 s, measured). Here each address's row
-- is updated once with all of its emails of the batch (addresses in order, so two batches lock them in the same
-- order), and the tenant's daily count once with all of them.
--
-- Returns, for each email in order, whether its address stopped the tenant's emails (nothing counted for it, as the
-- single function's `true`). Raises WA001 (recipient cap; DETAIL: the first address over it, in item order) or WA002
-- (tenant budget), and then nothing is counted: the caller's statement is undone.
--
-- The tenant's budget: a batch always takes the exact path (all 16 slots locked, their sum read, the batch's emails
-- added to slot 0). The fast path of a single email relies on every session having at most one email in flight
-- that others cannot see yet; a batch's would be up to 1,000. Single emails of the tenant wait for the slots while
-- the batch's statement runs (its transaction, with an Idempotency-Key), no longer.
CREATE FUNCTION take_mail_allowances(
  p_tenant uuid, p_emails text[], p_day date, p_new_ids uuid[], p_per_recipient int, p_per_tenant int
) RETURNS boolean[] LANGUAGE plpgsql AS $$
DECLARE
  v_taken text[];
  v_stopped text[];
  v_refused text;
  v_count bigint;
  v_sent bigint;
BEGIN
  WITH wanted AS (
    SELECT e.email, count(*)::int AS n, (array_agg(e.id ORDER BY e.ord))[1] AS id
    FROM unnest(p_emails, p_new_ids) WITH ORDINALITY AS e(email, id, ord)
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

  -- The addresses not taken: stopped (a fresh read: a row another transaction made meanwhile counts), or over the cap.
  SELECT coalesce(array_agg(DISTINCT e.email) FILTER (WHERE r.stopped_at IS NOT NULL), '{}'),
         (array_agg(e.email ORDER BY e.ord) FILTER (WHERE r.stopped_at IS NULL))[1]
  INTO v_stopped, v_refused
  FROM unnest(p_emails) WITH ORDINALITY AS e(email, ord)
  LEFT JOIN mail_recipients r ON r.tenant_id = p_tenant AND r.email = e.email
  WHERE e.email <> ALL (v_taken);
  IF v_refused IS NOT NULL THEN
    RAISE EXCEPTION 'recipient_email_limit_reached' USING ERRCODE = 'WA001', DETAIL = v_refused;
  END IF;

  SELECT count(*) INTO v_count FROM unnest(p_emails) AS e(email) WHERE e.email = ANY (v_taken);
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
  END IF;

  RETURN ARRAY(SELECT e.email = ANY (v_stopped) FROM unnest(p_emails) WITH ORDINALITY AS e(email, ord) ORDER BY e.ord);
END
$$;
