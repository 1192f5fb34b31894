-- Hand-written: a creation under an Idempotency-Key records what it returned (its result, sealed JSON) with its
-- effect, in the same statement or transaction; the HTTP layer renders a retry's answer from it, as it rendered
-- the first one. A request that created nothing (a refusal) still stores its response (status, body, ...).
-- No default: adding the column rewrites nothing.
ALTER TABLE "idempotency_keys" ADD COLUMN "result" TEXT;
