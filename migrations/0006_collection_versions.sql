CREATE TABLE "collection_versions" (
	"tenant_id" uuid NOT NULL,
	"collection" text NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "collection_versions_tenant_id_collection_pk" PRIMARY KEY("tenant_id","collection")
);
