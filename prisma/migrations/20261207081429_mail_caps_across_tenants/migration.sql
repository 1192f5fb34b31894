-- CreateTable
CREATE TABLE "mail_addresses" (
    "email" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "sent" INTEGER NOT NULL,
    "stopped_at" TIMESTAMPTZ(3),

    CONSTRAINT "mail_addresses_pkey" PRIMARY KEY ("email")
);

-- CreateTable
CREATE TABLE "user_mail_days" (
    "user_id" UUID NOT NULL,
    "slot" SMALLINT NOT NULL DEFAULT 0,
    "day" DATE NOT NULL,
    "sent" INTEGER NOT NULL,

    CONSTRAINT "user_mail_days_pkey" PRIMARY KEY ("user_id","slot")
);

-- AddForeignKey
ALTER TABLE "user_mail_days" ADD CONSTRAINT "user_mail_days_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written from here: issue 42, finding 1. The caps counted per tenant and exact address, so one account
-- mailed one inbox again through a `+tag` variant of the address or through a second tenant it owns. Now every
-- address is counted (and stopped) in a canonical form, across the whole service as well as per tenant, and every
-- email a member causes counts against that member's own daily budget, whichever tenant it comes from.

-- The form an address is counted and stopped in: lower case, the local part cut at its first `+` (sub-addressing:
-- `victim+1@example.org` is `victim@example.org`'s mailbox at every major provider), and for gmail.com and its
-- alias googlemail.com the dots of the local part dropped (Google delivers `v.ictim@gmail.com` to `victim`; no two
-- Gmail accounts differ by dots only). Nothing else: a `-tag`, a dot at any other provider, and the domain's
-- sub-domains can be different mailboxes, and merging two people would cap one for the other's emails. The
-- contract admits only ASCII addresses without a trailing dot (`format: email`): an internationalised domain comes
-- already as its `xn--` A-label, the form it is compared in; a trailing dot is cut all the same, for safety.
-- An address without `@` (none is accepted) is only lower-cased. One expression (not STRICT), so that PostgreSQL
-- inlines it into the statement or function that calls it rather than planning a function call each time.
CREATE FUNCTION canonical_email(p_email text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN lower(p_email) ~ '@(gmail|googlemail)\.com\.?$'
      THEN replace(regexp_replace(lower(p_email), '^([^+@]+)\+[^@]*@.*$|@[^@]*$', '\1'), '.', '') || '@gmail.com'
    ELSE regexp_replace(regexp_replace(lower(p_email), '^([^+@]+)\+[^@]*(@[^@]*)$', '\1\2'), '\.$', '')
  END
$$;

-- The rows written so far, made canonical. Of the rows of one tenant whose addresses are one canonical address, one
-- is kept (the one already canonical, else the oldest) under the canonical address, with the group's count of its
-- latest day and stopped if any of them was; the others stay as they are, only so that the stop links they named
-- keep working (such a link acts on its tenant's canonical row; nothing counts in them any more).
CREATE TEMPORARY TABLE mail_recipient_groups AS
SELECT tenant_id, canon AS email, (array_agg(id ORDER BY email = canon DESC, id))[1] AS keeper, max(day) AS day,
       coalesce(sum(sent) FILTER (WHERE day = latest), 0)::int AS sent, min(stopped_at) AS stopped_at
FROM (SELECT r.*, canonical_email(r.email) AS canon,
             max(r.day) OVER (PARTITION BY r.tenant_id, canonical_email(r.email)) AS latest
      FROM mail_recipients r) rows_of_groups
GROUP BY tenant_id, canon;

UPDATE mail_recipients r
SET email = g.email, day = g.day, sent = g.sent, stopped_at = g.stopped_at
FROM mail_recipient_groups g
WHERE r.id = g.keeper;

-- Today's service-wide counts start from what the tenants counted, so the upgrade gives no address a fresh day.
INSERT INTO mail_addresses (email, day, sent)
SELECT email, day, sum(sent) FROM (
  SELECT g.email, r.day, r.sent, max(r.day) OVER (PARTITION BY g.email) AS latest
  FROM mail_recipient_groups g JOIN mail_recipients r ON r.id = g.keeper) kept
WHERE day = latest GROUP BY email, day;
DROP TABLE mail_recipient_groups;

-- A budget striped over 16 rows (`slot`), exact, as the tenant's was (migrations striped_tenant_mail_days,
-- mail_allowance_one_pass, mail_slot_per_connection), now one function per table: the tenant's
-- (MAX_EMAILS_PER_TENANT_PER_DAY, SQLSTATE WA002) and the sending user's (MAX_EMAILS_PER_SENDER_PER_DAY, WA004).
-- Far from the budget (the count read before, plus twice the most sessions PostgreSQL admits, within it) an email
-- counts in its session's slot and the sum is read again; near it, the email locks every slot in order, reads the
-- exact count and counts in slot 0. Far-path emails keep the two budgets' writes in their own subtransaction, rolled
-- back when the second sum finds the budget near.
CREATE FUNCTION take_tenant_mail_budget(p_tenant uuid, p_day date, p_per_tenant int) RETURNS void
LANGUAGE plpgsql AS $$
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
$$;

CREATE FUNCTION take_user_mail_budget(p_user uuid, p_day date, p_per_sender int) RETURNS void
LANGUAGE plpgsql AS $$
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
$$;

-- One email's place under every daily cap, taken in the statement that queues it (a request's INSERT, a resend's
-- UPDATE, an invitation's transaction; later a sign-in link's). In order, each a primary-key upsert or a striped
-- budget, each raising its SQLSTATE over its cap, which aborts the whole statement (nothing created, nothing counted):
-- 1. with a tenant: the tenant's count for the canonical address (MAX_EMAILS_PER_RECIPIENT_PER_DAY, WA001), or
--    `true` (nothing counted, nothing to send) when the address stopped the tenant's emails;
-- 2. the address's count across the service (MAX_EMAILS_PER_ADDRESS_PER_DAY, WA003), or `true` when the address
--    stopped every email of the service (the tenant's count of step 1 given back);
-- 3. with a tenant: the tenant's budget (MAX_EMAILS_PER_TENANT_PER_DAY, WA002);
-- 4. with a sender (the member who caused it: the request's creator, the resender, the inviter): their budget
--    across every tenant (MAX_EMAILS_PER_SENDER_PER_DAY, WA004).
-- `p_stoppable` false: an email the address asked for itself (a sign-in link), delivered whatever it stopped, so
-- that a stop never locks a person out of their account; it still counts under the address's cap.
CREATE FUNCTION take_mail_allowance(
  p_tenant uuid, p_sender uuid, p_email text, p_day date, p_new_id uuid,
  p_per_recipient int, p_per_tenant int, p_per_address int, p_per_sender int, p_stoppable boolean
) RETURNS boolean LANGUAGE plpgsql AS $$
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
$$;

-- The previous release's call (tenant and exact address only), for its processes still serving during a rolling
-- upgrade: the same checks as above with the address's default service-wide cap and no sender. Unused by this
-- release; a later migration drops it.
CREATE OR REPLACE FUNCTION take_mail_allowance(
  p_tenant uuid, p_email text, p_day date, p_new_id uuid, p_per_recipient int, p_per_tenant int
) RETURNS boolean LANGUAGE sql AS $$
  SELECT take_mail_allowance(p_tenant, NULL::uuid, p_email, p_day, p_new_id, p_per_recipient, p_per_tenant, 50,
                             NULL::int, true)
$$;
