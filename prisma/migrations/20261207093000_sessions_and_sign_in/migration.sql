-- AlterTable
ALTER TABLE "mail_outbox" ADD COLUMN     "sign_in_id" UUID;

-- CreateTable
CREATE TABLE "sessions" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "token_hash" CHAR(64) NOT NULL,
    "user_agent" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_used_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sign_in_links" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "canonical_email" TEXT NOT NULL,
    "token_hash" CHAR(64),
    "code_hash" CHAR(64),
    "code_failures" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3),
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "sign_in_links_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"("token_hash");

-- CreateIndex
CREATE INDEX "sessions_user_id_id_idx" ON "sessions"("user_id", "id");

-- CreateIndex
CREATE INDEX "sessions_expires_at_idx" ON "sessions"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "sign_in_links_token_hash_key" ON "sign_in_links"("token_hash");

-- CreateIndex
CREATE INDEX "sign_in_links_canonical_email_created_at_idx" ON "sign_in_links"("canonical_email", "created_at");

-- CreateIndex
CREATE INDEX "sign_in_links_email_created_at_idx" ON "sign_in_links"("email", "created_at");

-- CreateIndex
CREATE INDEX "sign_in_links_created_at_idx" ON "sign_in_links"("created_at");

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
