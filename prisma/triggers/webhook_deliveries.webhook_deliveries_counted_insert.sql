CREATE TRIGGER webhook_deliveries_counted_insert AFTER INSERT ON public.webhook_deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_deliveries();
