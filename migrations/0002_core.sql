DROP INDEX "api_keys_tenant_created";--> statement-breakpoint
CREATE INDEX "api_keys_tenant_created_id" ON "api_keys" USING btree ("tenant_id","created_at","id");