CREATE TRIGGER webhook_deliveries_counted_delete AFTER DELETE ON public.webhook_deliveries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_deliveries();
