-- DropIndex
DROP INDEX "invitations_email_idx";

-- AlterTable
-- Hand-edited: invitations made before expiry existed get the default 14 days from when they were made.
ALTER TABLE "invitations" ADD COLUMN     "expires_at" TIMESTAMPTZ(3);
UPDATE "invitations" SET "expires_at" = "created_at" + interval '14 days';
ALTER TABLE "invitations" ALTER COLUMN "expires_at" SET NOT NULL;

-- AlterTable
ALTER TABLE "mail_outbox" ADD COLUMN     "invitation_id" UUID,
ADD COLUMN     "tenant_id" UUID;

-- Hand-edited: queued request emails of earlier versions name their tenant too (a test's sender claims by it).
UPDATE "mail_outbox" m SET "tenant_id" = w."tenant_id"
FROM "requests" r JOIN "works" w ON w."id" = r."work_id"
WHERE m."request_id" = r."id" AND m."status" = 'queued';

-- CreateIndex
CREATE INDEX "invitations_email_id_idx" ON "invitations"("email", "id");
