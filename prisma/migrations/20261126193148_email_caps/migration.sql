-- AlterTable
ALTER TABLE "requests" ADD COLUMN     "emails_stopped" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "last_resent_at" TIMESTAMPTZ(3),
ADD COLUMN     "resend_count" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "mail_recipients" (
    "tenant_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "sent" INTEGER NOT NULL,
    "stopped_at" TIMESTAMPTZ(3),

    CONSTRAINT "mail_recipients_pkey" PRIMARY KEY ("tenant_id","email")
);

-- CreateTable
CREATE TABLE "tenant_mail_days" (
    "tenant_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "sent" INTEGER NOT NULL,

    CONSTRAINT "tenant_mail_days_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "mail_recipients_id_key" ON "mail_recipients"("id");

-- AddForeignKey
ALTER TABLE "mail_recipients" ADD CONSTRAINT "mail_recipients_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tenant_mail_days" ADD CONSTRAINT "tenant_mail_days_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: one email's place under the daily caps, taken in the statement that queues the email (the request's
-- INSERT, a resend's UPDATE, an invitation's transaction). Returns true, counting nothing, when the address stopped
-- this tenant's emails (then nothing is queued). Otherwise it counts the email for the address and for the tenant,
-- each an upsert of one row under that row's lock (the day's count starts over on a new UTC day); over a cap it
-- raises (SQLSTATE WA001 for the address, WA002 for the tenant), which aborts the whole statement: nothing is
-- created, nothing is counted. No count(*): two primary-key rows, however many emails the tenant ever sent.
CREATE FUNCTION take_mail_allowance(
  p_tenant uuid, p_email text, p_day date, p_new_id uuid, p_per_recipient int, p_per_tenant int
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_stopped boolean;
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
  INSERT INTO tenant_mail_days AS t (tenant_id, day, sent)
  VALUES (p_tenant, p_day, 1)
  ON CONFLICT (tenant_id) DO UPDATE
  SET day = EXCLUDED.day, sent = CASE WHEN t.day = EXCLUDED.day THEN t.sent + 1 ELSE 1 END
  WHERE t.day <> EXCLUDED.day OR t.sent < p_per_tenant;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'tenant_email_budget_exhausted' USING ERRCODE = 'WA002';
  END IF;
  RETURN false;
END
$$;
