-- Hand-written. A created request is counted by create request's own statement (its work's count, in the
-- session's slot: packages/server/src/domain/requests/requests.ts), no longer by a statement-level insert trigger.
-- Measured on that statement after a bench run (backend CPU per create, prepared, 2,000 creates a run, 3 runs
-- alternating, load 5-8): 0.78-0.86 ms with the trigger (its transition table, its PL/pgSQL call and its grouped
-- upsert), 0.70-0.76 ms with the same count written in the statement. Every insert of requests counts itself
-- (create request; the large data set's seed counts its bulk insert in the same statement). Updates and deletes
-- keep their triggers (count_requests keeps its INSERT branch, now unused).
DROP TRIGGER requests_counted_insert ON requests;
