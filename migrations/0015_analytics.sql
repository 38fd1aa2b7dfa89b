CREATE TABLE "analytics_beacons" (
	"time" timestamp with time zone DEFAULT now() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"impression_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"source" text DEFAULT 'beacon' NOT NULL,
	"asset_id" text,
	"asset_type" text,
	"player_tech" text,
	"browser" text,
	"os" text,
	"device_type" text,
	"domain" text,
	"played_seconds" real,
	"video_bitrate" integer,
	"buffering_ms" integer,
	"startup_time_ms" integer,
	"error_code" text,
	"exited_before_start" smallint,
	"playback_failed" smallint,
	"ad_id" text,
	"ad_position" text,
	"ad_played_seconds" real,
	"ad_clicked" smallint,
	"ad_skipped" smallint
);
--> statement-breakpoint
ALTER TABLE "analytics_beacons" ADD CONSTRAINT "analytics_beacons_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "analytics_beacons_tenant_time" ON "analytics_beacons" USING btree ("tenant_id","time");