-- AlterTable
ALTER TABLE "tenant_mail_days" DROP CONSTRAINT "tenant_mail_days_pkey",
ADD COLUMN     "slot" SMALLINT NOT NULL DEFAULT 0,
ADD CONSTRAINT "tenant_mail_days_pkey" PRIMARY KEY ("tenant_id", "slot");

-- Hand-written: a tenant's daily email count is striped like the row counts. With one row per tenant, every email
-- of a tenant queued on that row's lock, held until its transaction committed: the tenant's requests were created
-- one commit at a time. The day's count is now the sum of up to 16 rows (`slot`; the existing rows are slot 0),
-- and the budget stays exact:
-- - far from the budget (the count read before, plus twice the most sessions PostgreSQL admits, within it), the
--   email counts in its session's slot (1 to 15), then the sum is read again. Every other email not in that sum
--   is held by a transaction still running, at most one per other session (one email per transaction): with the
--   sum plus max_connections - 1 within the budget, whatever commits, the budget holds. Otherwise (more emails
--   than sessions came in between the two reads) the slot's count is rolled back and the email goes the near way;
-- - near the budget, the email locks every slot of the tenant (all 16 made first, in slot order, so it also waits
--   for a transaction making one), reads the exact count with nothing in flight, and counts in slot 0 if there is
--   room. Near the end of a tenant's budget (its last 2 × max_connections emails of the day) its emails go one
--   at a time again, exactly as before.
-- The per-address count keeps one row: its cap is small (20 a day by default), so it is near its end at once.
CREATE OR REPLACE FUNCTION take_mail_allowance(
  p_tenant uuid, p_email text, p_day date, p_new_id uuid, p_per_recipient int, p_per_tenant int
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_stopped boolean;
  v_sent bigint;
  v_sessions int := current_setting('max_connections')::int;
BEGIN
  INSERT INTO mail_recipients (tenant_id, email, id, day, sent)
  VALUES (p_tenant, p_email, p_new_id, p_day, 0)
  ON CONFLICT (tenant_id, email) DO NOTHING;
  UPDATE mail_recipients r
  SET day = p_day, sent = CASE WHEN r.day = p_day THEN r.sent + 1 ELSE 1 END
  WHERE r.tenant_id = p_tenant AND r.email = p_email AND r.stopped_at IS NULL
    AND (r.day <> p_day OR r.sent < p_per_recipient);
  IF NOT FOUND THEN
    SELECT r.stopped_at IS NOT NULL INTO v_stopped
    FROM mail_recipients r WHERE r.tenant_id = p_tenant AND r.email = p_email;
    IF v_stopped THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'recipient_email_limit_reached' USING ERRCODE = 'WA001';
  END IF;

  SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
  FROM tenant_mail_days WHERE tenant_id = p_tenant;
  IF v_sent + 2 * v_sessions <= p_per_tenant THEN
    BEGIN
      INSERT INTO tenant_mail_days AS t (tenant_id, slot, day, sent)
      VALUES (p_tenant, (counter_slot() % 15 + 1)::smallint, p_day, 1)
      ON CONFLICT (tenant_id, slot) DO UPDATE
      SET day = EXCLUDED.day, sent = CASE WHEN t.day = EXCLUDED.day THEN t.sent + 1 ELSE 1 END;
      SELECT coalesce(sum(sent) FILTER (WHERE day = p_day), 0) INTO v_sent
      FROM tenant_mail_days WHERE tenant_id = p_tenant;
      IF v_sent + v_sessions - 1 <= p_per_tenant THEN
        RETURN false;
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
  RETURN false;
END
$$;
