CREATE TABLE "streaming_assets" (
	"tenant_id" uuid NOT NULL,
	"asset_id" text NOT NULL,
	"title" text,
	"description" text,
	"metadata" jsonb,
	"tags" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"images" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"chapters" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"frames_status" text,
	"frames" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"frames_error" text,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "streaming_assets_tenant_id_asset_id_pk" PRIMARY KEY("tenant_id","asset_id")
);
--> statement-breakpoint
CREATE TABLE "streaming_domains" (
	"id" uuid PRIMARY KEY NOT NULL,
	"analytics_domain_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"url" text NOT NULL,
	"host" text NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "streaming_images" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"asset_id" text NOT NULL,
	"name" text NOT NULL,
	"orginal_file_name" text NOT NULL,
	"file_key" text NOT NULL,
	"file_size" bigint NOT NULL,
	"status" text NOT NULL,
	"file_type" text,
	"upload_id" text,
	"part_size" bigint NOT NULL,
	"parts_count" integer NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "streaming_sessions" (
	"tenant_id" uuid NOT NULL,
	"holder" text NOT NULL,
	"session" text NOT NULL,
	"asset_id" text NOT NULL,
	"last_seen" timestamp with time zone NOT NULL,
	CONSTRAINT "streaming_sessions_tenant_id_holder_session_pk" PRIMARY KEY("tenant_id","holder","session")
);
--> statement-breakpoint
CREATE TABLE "streaming_tenant_settings" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"signing_key" text NOT NULL,
	"defaults" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"cap_limit" integer DEFAULT 1 NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "streaming_assets" ADD CONSTRAINT "streaming_assets_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "streaming_domains" ADD CONSTRAINT "streaming_domains_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "streaming_images" ADD CONSTRAINT "streaming_images_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "streaming_sessions" ADD CONSTRAINT "streaming_sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "streaming_tenant_settings" ADD CONSTRAINT "streaming_tenant_settings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "streaming_domains_tenant_host" ON "streaming_domains" USING btree ("tenant_id","host");--> statement-breakpoint
CREATE INDEX "streaming_images_tenant_asset" ON "streaming_images" USING btree ("tenant_id","asset_id","create_date");