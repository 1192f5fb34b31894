CREATE TRIGGER api_keys_counted_insert AFTER INSERT ON public.api_keys REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_api_keys();
