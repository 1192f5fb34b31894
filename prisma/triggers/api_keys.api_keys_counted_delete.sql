CREATE TRIGGER api_keys_counted_delete AFTER DELETE ON public.api_keys REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_api_keys();
