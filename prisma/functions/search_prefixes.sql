CREATE OR REPLACE FUNCTION public.search_prefixes(search text)
 RETURNS text[]
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
BEGIN
  RETURN ARRAY(
    SELECT DISTINCT left(word, generate_series(1, least(length(word), 16)))
    FROM unnest(string_to_array(btrim(left(search, 8000)), ' ')) AS word
    WHERE word <> ''
  );
END
$function$;
