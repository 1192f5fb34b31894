-- Hand-written. The search_and_events migration folded the search texts of the rows it found in SQL, for the
-- accents of Latin scripts only (translate()): not as the application folds (NFKD, every script, ligatures and
-- full-width forms; `ł` and `ø` kept). The application re-folds those rows once (domain/search/refold.ts), in
-- batches by id, after it starts; this table records how far it got per table (no row: not started; it starts with
-- no row, so that a new database counts as empty to a restore), so that it resumes after a restart and, once done,
-- never runs again. Rows it finds already folded as the application folds are left alone.
CREATE TABLE "search_refolds" (
    "table_name" TEXT NOT NULL,
    "after_id" UUID,
    "done_at" TIMESTAMPTZ(3),

    CONSTRAINT "search_refolds_pkey" PRIMARY KEY ("table_name")
);
