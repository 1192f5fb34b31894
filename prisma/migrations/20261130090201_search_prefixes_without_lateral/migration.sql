-- Hand-written: `search_prefixes` (migration search_prefixes_planned_once) with the same result, each word's prefix
-- lengths generated in the select list (one ProjectSet) instead of a lateral generate_series per word (a function
-- scan, with its own tuplestore, for every word). It runs on every insert of a work or a request (their generated
-- column). Measured, 20,000 calls on create request's search text (17 words, 60 distinct prefixes), alternating
-- (load 8-9): 0.20-0.27 ms a call before, 0.13-0.18 ms after. The same set of prefixes (compared on that text, an
-- empty one, blanks only, accented and non-BMP letters, a word over 16 letters); order never mattered (the index
-- and `@>` ignore it), so the stored columns stay as they are.
CREATE OR REPLACE FUNCTION search_prefixes(search text) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
  RETURN ARRAY(
    SELECT DISTINCT left(word, generate_series(1, least(length(word), 16)))
    FROM unnest(string_to_array(btrim(search), ' ')) AS word
    WHERE word <> ''
  );
END
$$;
