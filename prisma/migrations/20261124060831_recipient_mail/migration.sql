-- CreateEnum
CREATE TYPE "actor_type" AS ENUM ('user', 'recipient');

-- CreateEnum
CREATE TYPE "mail_status" AS ENUM ('queued', 'sent', 'failed', 'dropped');

-- AlterTable
ALTER TABLE "request_events" ADD COLUMN     "actor_type" "actor_type" NOT NULL DEFAULT 'user',
ALTER COLUMN "actor_id" DROP NOT NULL;

-- AlterTable
ALTER TABLE "requests" ADD COLUMN     "email_failure" TEXT,
ADD COLUMN     "email_sent_at" TIMESTAMPTZ(3),
ADD COLUMN     "email_status" "mail_status",
ADD COLUMN     "link_generation" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "reminded_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "answer_links" (
    "token_hash" CHAR(64) NOT NULL,
    "request_id" UUID NOT NULL,
    "generation" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "answer_links_pkey" PRIMARY KEY ("token_hash")
);

-- CreateTable
CREATE TABLE "mail_outbox" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "request_id" UUID,
    "to" TEXT,
    "subject" TEXT,
    "text" TEXT,
    "html" TEXT,
    "status" "mail_status" NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mail_outbox_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "answer_links_request_id_idx" ON "answer_links"("request_id");

-- CreateIndex
CREATE INDEX "mail_outbox_request_id_idx" ON "mail_outbox"("request_id");

-- AddForeignKey
ALTER TABLE "answer_links" ADD CONSTRAINT "answer_links_request_id_fkey" FOREIGN KEY ("request_id") REFERENCES "requests"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A member's event names the member; the recipient's names nobody (they have no user).
ALTER TABLE "request_events" ADD CONSTRAINT "request_events_actor_check" CHECK (("actor_type" = 'user') = ("actor_id" IS NOT NULL));

-- What the mail sender claims: queued emails by when they are due (sent ones leave the index).
CREATE INDEX "mail_outbox_due_idx" ON "mail_outbox"("next_attempt_at") WHERE "status" = 'queued';

-- What the reminder scan reads: pending requests with a due date and no reminder yet, by due date.
CREATE INDEX "requests_reminder_due_idx" ON "requests"("due_at") WHERE "status" = 'pending' AND "reminded_at" IS NULL AND "due_at" IS NOT NULL;
