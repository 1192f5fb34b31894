CREATE TRIGGER webhook_endpoints_counted_delete AFTER DELETE ON public.webhook_endpoints REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_endpoints();
