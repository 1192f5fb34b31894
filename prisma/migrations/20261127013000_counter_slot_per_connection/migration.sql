-- Hand-written: a session's counter slot is the one its connection named at start-up (`works.counter_slot`, set
-- by the server's pool so that its connections write different rows), or else its backend's pid modulo 16 as
-- before (psql, scripts). The tenant's email count takes the same slot (1 to 15; 0 is for near its budget).
CREATE OR REPLACE FUNCTION counter_slot() RETURNS smallint LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('works.counter_slot', true), '')::int % 16, pg_backend_pid() % 16)::smallint
$$;
