CREATE TRIGGER requests_counted_update AFTER UPDATE ON public.requests REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_requests();
