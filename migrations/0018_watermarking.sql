CREATE TABLE "watermarking_assets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"vod_asset_id" uuid NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'Pending' NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"error_message" text,
	"width" integer,
	"height" integer,
	"video_bitrate_kbps" integer,
	"segment_duration" integer NOT NULL,
	"user_number_bits" integer NOT NULL,
	"strength" integer NOT NULL,
	"segment_durations" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"signature" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"job_id" text,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "watermarking_files" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"orginal_file_name" text NOT NULL,
	"file_key" text NOT NULL,
	"file_size" bigint NOT NULL,
	"upload_status" text NOT NULL,
	"upload_id" text,
	"part_size" bigint NOT NULL,
	"parts_count" integer NOT NULL,
	"detection" jsonb,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "watermarking_sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"asset_id" uuid NOT NULL,
	"user_number" bigint NOT NULL,
	"user_name" text NOT NULL,
	"revoked" boolean DEFAULT false NOT NULL,
	"revoke_date" timestamp with time zone,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "watermarking_settings" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"user_number_bits" integer NOT NULL,
	"segment_duration" integer NOT NULL,
	"strength" integer NOT NULL,
	"token_ttl_seconds" integer NOT NULL,
	"min_confidence" real NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "watermarking_assets" ADD CONSTRAINT "watermarking_assets_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "watermarking_files" ADD CONSTRAINT "watermarking_files_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "watermarking_sessions" ADD CONSTRAINT "watermarking_sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "watermarking_sessions" ADD CONSTRAINT "watermarking_sessions_asset_id_watermarking_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."watermarking_assets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "watermarking_settings" ADD CONSTRAINT "watermarking_settings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "watermarking_assets_tenant_created" ON "watermarking_assets" USING btree ("tenant_id","create_date");--> statement-breakpoint
CREATE INDEX "watermarking_files_tenant_created" ON "watermarking_files" USING btree ("tenant_id","create_date");--> statement-breakpoint
CREATE UNIQUE INDEX "watermarking_sessions_asset_user" ON "watermarking_sessions" USING btree ("asset_id","user_number");--> statement-breakpoint
CREATE INDEX "watermarking_sessions_tenant_created" ON "watermarking_sessions" USING btree ("tenant_id","create_date");