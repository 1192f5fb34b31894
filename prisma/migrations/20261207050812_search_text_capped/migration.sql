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

-- The rows stored before with a longer text are re-folded by the application, as it folds now (capped), in the
-- background after start-up, in batches by id (domain/search/refold.ts): no table scan while the migrations run.
-- Emptying this table starts that re-fold again; it rewrites only the rows whose text differs, the capped ones.
DELETE FROM "search_refolds";
