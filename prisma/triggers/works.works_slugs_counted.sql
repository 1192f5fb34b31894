CREATE TRIGGER works_slugs_counted AFTER INSERT ON public.works FOR EACH ROW WHEN ((new.slug ~ '.-[0-9]{1,9}$'::text)) EXECUTE FUNCTION count_work_slug();
