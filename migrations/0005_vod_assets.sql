CREATE TABLE "vod_assets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"title" text,
	"preset" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"attributes" text[] DEFAULT '{}'::text[] NOT NULL,
	"status" text DEFAULT 'Pending' NOT NULL,
	"error_message" text,
	"duration_ms" bigint,
	"sources" jsonb NOT NULL,
	"file_ids" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"overlays" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"access_policy_id" uuid,
	"source_file_extension" text,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vod_outputs" (
	"asset_id" uuid NOT NULL,
	"id" text NOT NULL,
	"tenant_id" uuid NOT NULL,
	"preset" text NOT NULL,
	"status" text DEFAULT 'Pending' NOT NULL,
	"progress_percent" integer DEFAULT 0 NOT NULL,
	"overlays" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"endpoints" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error_message" text,
	"expiration_date" timestamp with time zone,
	"completion_date" timestamp with time zone,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"job_id" text,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vod_outputs_asset_id_id_pk" PRIMARY KEY("asset_id","id")
);
--> statement-breakpoint
ALTER TABLE "vod_assets" ADD CONSTRAINT "vod_assets_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vod_outputs" ADD CONSTRAINT "vod_outputs_asset_id_vod_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."vod_assets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "vod_assets_tenant_created" ON "vod_assets" USING btree ("tenant_id","create_date");--> statement-breakpoint
CREATE INDEX "vod_outputs_status_lease" ON "vod_outputs" USING btree ("status","lease_until");--> statement-breakpoint
CREATE INDEX "vod_outputs_expiration" ON "vod_outputs" USING btree ("expiration_date");