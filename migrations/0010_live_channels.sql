CREATE TABLE "live_channel_stats" (
	"channel_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"metric" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"value" double precision NOT NULL,
	CONSTRAINT "live_channel_stats_channel_id_metric_minute_pk" PRIMARY KEY("channel_id","metric","minute")
);
--> statement-breakpoint
CREATE TABLE "live_channels" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'Off' NOT NULL,
	"internal_status" text,
	"redundancy" text DEFAULT 'SingleInput' NOT NULL,
	"latency" text DEFAULT 'NormalLatency' NOT NULL,
	"activation_mode" text DEFAULT 'Manual' NOT NULL,
	"transmission_type" text DEFAULT 'Video' NOT NULL,
	"environment" text DEFAULT 'ManagedLive' NOT NULL,
	"packaging_version" text DEFAULT 'V1' NOT NULL,
	"is_watermark_protected" boolean DEFAULT false NOT NULL,
	"ai_live_captioning_language_code" text,
	"drm_key_mode" text,
	"broadcast_standard" text,
	"automation_disabled" boolean DEFAULT false NOT NULL,
	"input" jsonb NOT NULL,
	"endpoints" jsonb NOT NULL,
	"qualities" jsonb NOT NULL,
	"restreams" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"access_policy_id" uuid,
	"stream_key" text NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "live_channel_stats" ADD CONSTRAINT "live_channel_stats_channel_id_live_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."live_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "live_channels" ADD CONSTRAINT "live_channels_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "live_channels_tenant_created" ON "live_channels" USING btree ("tenant_id","create_date");--> statement-breakpoint
CREATE UNIQUE INDEX "live_channels_stream_key" ON "live_channels" USING btree ("stream_key");--> statement-breakpoint
CREATE INDEX "live_channels_status_lease" ON "live_channels" USING btree ("status","lease_until");