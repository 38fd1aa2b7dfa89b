CREATE TABLE "vod_files" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"friendly_name" text NOT NULL,
	"orginal_file_name" text NOT NULL,
	"extension" text NOT NULL,
	"file_key" text NOT NULL,
	"file_size" bigint NOT NULL,
	"status" text NOT NULL,
	"file_types" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"attributes" text[] DEFAULT '{}'::text[] NOT NULL,
	"tracks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"duration_ms" bigint,
	"vod_assets" text[] DEFAULT '{}'::text[] NOT NULL,
	"upload_id" text,
	"part_size" bigint NOT NULL,
	"parts_count" integer NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "vod_files" ADD CONSTRAINT "vod_files_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "vod_files_tenant_created" ON "vod_files" USING btree ("tenant_id","create_date");--> statement-breakpoint
CREATE INDEX "vod_files_tenant_status" ON "vod_files" USING btree ("tenant_id","status");