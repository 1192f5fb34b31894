CREATE TRIGGER memberships_counted_delete AFTER DELETE ON public.memberships REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_memberships();
