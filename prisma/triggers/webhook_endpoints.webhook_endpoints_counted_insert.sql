CREATE TRIGGER webhook_endpoints_counted_insert AFTER INSERT ON public.webhook_endpoints REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_endpoints();
