CREATE TABLE "drm_keys" (
	"tenant_id" uuid NOT NULL,
	"key_id" uuid NOT NULL,
	"content_id" text NOT NULL,
	"sealed_key" text NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "drm_keys_tenant_id_key_id_pk" PRIMARY KEY("tenant_id","key_id")
);
--> statement-breakpoint
CREATE TABLE "drm_license_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"time" timestamp with time zone DEFAULT now() NOT NULL,
	"type" text NOT NULL,
	"content_id" text,
	"key_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"policy_id" uuid,
	"user_id" text,
	"token_id" text,
	"granted" boolean NOT NULL,
	"error_code" text,
	"http_status" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "drm_policies" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"license_duration_seconds" integer NOT NULL,
	"rental_window_seconds" integer,
	"playback_duration_seconds" integer,
	"persistent" boolean DEFAULT false NOT NULL,
	"allowed_outputs" text[] DEFAULT '{}'::text[] NOT NULL,
	"concurrent_streams" integer,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "drm_settings" (
	"tenant_id" uuid PRIMARY KEY NOT NULL,
	"default_policy_id" uuid,
	"token_ttl_seconds" integer DEFAULT 600 NOT NULL,
	"certificate" text,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "drm_keys" ADD CONSTRAINT "drm_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "drm_license_log" ADD CONSTRAINT "drm_license_log_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "drm_policies" ADD CONSTRAINT "drm_policies_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "drm_settings" ADD CONSTRAINT "drm_settings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "drm_keys_tenant_content" ON "drm_keys" USING btree ("tenant_id","content_id");--> statement-breakpoint
CREATE INDEX "drm_license_log_tenant_time" ON "drm_license_log" USING btree ("tenant_id","time");--> statement-breakpoint
CREATE INDEX "drm_policies_tenant_created" ON "drm_policies" USING btree ("tenant_id","create_date");