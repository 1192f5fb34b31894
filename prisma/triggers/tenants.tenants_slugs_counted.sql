CREATE TRIGGER tenants_slugs_counted AFTER INSERT ON public.tenants FOR EACH ROW WHEN ((new.slug ~ '.-[0-9]{1,9}$'::text)) EXECUTE FUNCTION count_tenant_slug();
