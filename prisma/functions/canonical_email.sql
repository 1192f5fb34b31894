CREATE OR REPLACE FUNCTION public.canonical_email(p_email text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  SELECT CASE
    WHEN lower(p_email) ~ '@(gmail|googlemail)\.com\.?$'
      THEN replace(regexp_replace(lower(p_email), '^([^+@]+)\+[^@]*@.*$|@[^@]*$', '\1'), '.', '') || '@gmail.com'
    ELSE regexp_replace(regexp_replace(lower(p_email), '^([^+@]+)\+[^@]*(@[^@]*)$', '\1\2'), '\.$', '')
  END
$function$;
