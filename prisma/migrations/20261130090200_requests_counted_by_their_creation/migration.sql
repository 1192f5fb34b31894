-- Hand-written. A created request is counted by create request's own statement (its work's count, in the
-- session's slot: packages/server/src/domain/requests/requests.ts), no longer by a statement-level insert trigger.
-- Measured on that statement (backend CPU per create, after a bench run, autocommit): the trigger, with its
-- transition table, its PL/pgSQL call and its grouped upsert, cost about as much as the rest of the count's work;
-- the same upsert written in the statement, which is prepared once per connection, costs about half. Every insert
-- of requests counts itself (create request; the large data set's seed counts its bulk insert). Updates and
-- deletes keep their triggers (count_requests still has its INSERT branch, unused).
DROP TRIGGER requests_counted_insert ON requests;
