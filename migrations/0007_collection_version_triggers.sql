-- Bumps collection_versions for the tenant of each changed row, in the transaction of the change; the collection's
-- name is the trigger's argument. Every write path is covered, including cascades and hand-written SQL.
CREATE FUNCTION mediaplane_bump_collection_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO collection_versions (tenant_id, collection, version)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END, TG_ARGV[0], 1)
  ON CONFLICT (tenant_id, collection) DO UPDATE SET version = collection_versions.version + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_collection_version AFTER INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION mediaplane_bump_collection_version('core.api-keys');
