-- AlterTable
ALTER TABLE "answer_links" ADD COLUMN     "dev_mailbox" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "request_events" ADD COLUMN     "through_dev_mailbox" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "requests" ADD COLUMN     "confirmed_through_dev_mailbox" BOOLEAN NOT NULL DEFAULT false;
