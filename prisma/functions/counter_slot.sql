CREATE OR REPLACE FUNCTION public.counter_slot()
 RETURNS smallint
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(nullif(current_setting('works.counter_slot', true), '')::int % 16, pg_backend_pid() % 16)::smallint
$function$;
