-- Hand-written. What is stored and indexed for search stays bounded: folding can grow a text (NFKD turns U+FDFA into
-- 18 characters), so a 5,000-character message folded to about 90,000 characters and as many index entries. The
-- application now stores at most 8,000 characters of folded words (MAX_SEARCH_TEXT_LENGTH, domain/search/fold.ts),
-- and `search_prefixes` reads no further than that, whoever wrote the text (an older server process during a
-- rolling upgrade, a restored dump): the same result as before for every text within the cap.
CREATE OR REPLACE FUNCTION search_prefixes(search text) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
  RETURN ARRAY(
    SELECT DISTINCT left(word, generate_series(1, least(length(word), 16)))
    FROM unnest(string_to_array(btrim(left(search, 8000)), ' ')) AS word
    WHERE word <> ''
  );
END
$$;

-- The texts stored longer before are cut after their last whole word within 8,000 characters (a stored text is
-- ` word word …`), which recomputes their prefixes. One sequential read of each table, once: the byte length is
-- read from the value's header without decompressing it, and only a text over 8,000 bytes is measured in
-- characters. (The application's re-fold, domain/search/refold.ts, would fold every row again in JavaScript: far
-- dearer, for the few rows that folding multiplied.)
UPDATE "works"
SET search = left(search, least(8000, 8001 - strpos(reverse(left(search, 8001)), ' ')))
WHERE octet_length(search) > 8000 AND length(search) > 8000;
UPDATE "requests"
SET search = left(search, least(8000, 8001 - strpos(reverse(left(search, 8001)), ' ')))
WHERE octet_length(search) > 8000 AND length(search) > 8000;
