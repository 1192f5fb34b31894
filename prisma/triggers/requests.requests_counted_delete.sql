CREATE TRIGGER requests_counted_delete AFTER DELETE ON public.requests REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_requests();
