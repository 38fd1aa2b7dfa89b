CREATE TABLE "live_events" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"channel_id" uuid NOT NULL,
	"title" text,
	"start_time" timestamp with time zone NOT NULL,
	"end_time" timestamp with time zone NOT NULL,
	"ensure_channel" boolean DEFAULT false NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"attributes" text[] DEFAULT '{}'::text[] NOT NULL,
	"access_policy_id" uuid,
	"announced_status" text NOT NULL,
	"channel_hold" text DEFAULT 'Waiting' NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "recorder_outputs" (
	"recording_id" uuid NOT NULL,
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
	"attempts" integer DEFAULT 0 NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recorder_outputs_recording_id_id_pk" PRIMARY KEY("recording_id","id")
);
--> statement-breakpoint
CREATE TABLE "recorder_recordings" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"channel_id" uuid NOT NULL,
	"source_type" text DEFAULT 'LiveChannel' NOT NULL,
	"start" timestamp with time zone NOT NULL,
	"end" timestamp with time zone,
	"title" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"attributes" text[] DEFAULT '{}'::text[] NOT NULL,
	"status" text DEFAULT 'Pending' NOT NULL,
	"error_message" text,
	"duration_ms" bigint,
	"catchup_enabled" boolean DEFAULT false NOT NULL,
	"catchup_expiration_time" timestamp with time zone NOT NULL,
	"catchup_expired" boolean DEFAULT false NOT NULL,
	"archive" jsonb NOT NULL,
	"expiration_date" timestamp with time zone,
	"overlays" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"access_policy_id" uuid,
	"copied" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"recorded_at" timestamp with time zone,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	"last_modification_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "recorder_segments" (
	"recording_id" uuid NOT NULL,
	"track" text NOT NULL,
	"sequence" integer NOT NULL,
	"key" text NOT NULL,
	"init_key" text NOT NULL,
	"start_ms" bigint NOT NULL,
	"duration_ms" integer NOT NULL,
	"run" integer NOT NULL,
	"size" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "recorder_segments_recording_id_track_sequence_pk" PRIMARY KEY("recording_id","track","sequence")
);
--> statement-breakpoint
CREATE TABLE "live_timeline_segments" (
	"channel_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"track" text NOT NULL,
	"sequence" integer NOT NULL,
	"key" text NOT NULL,
	"init_key" text NOT NULL,
	"start_ms" bigint NOT NULL,
	"duration_ms" integer NOT NULL,
	"decode_time" bigint NOT NULL,
	"timescale" integer NOT NULL,
	"run" integer NOT NULL,
	CONSTRAINT "live_timeline_segments_channel_id_track_sequence_pk" PRIMARY KEY("channel_id","track","sequence")
);
--> statement-breakpoint
ALTER TABLE "live_events" ADD CONSTRAINT "live_events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "live_events" ADD CONSTRAINT "live_events_channel_id_live_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."live_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recorder_outputs" ADD CONSTRAINT "recorder_outputs_recording_id_recorder_recordings_id_fk" FOREIGN KEY ("recording_id") REFERENCES "public"."recorder_recordings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recorder_recordings" ADD CONSTRAINT "recorder_recordings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recorder_segments" ADD CONSTRAINT "recorder_segments_recording_id_recorder_recordings_id_fk" FOREIGN KEY ("recording_id") REFERENCES "public"."recorder_recordings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "live_timeline_segments" ADD CONSTRAINT "live_timeline_segments_channel_id_live_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."live_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "live_events_tenant_start" ON "live_events" USING btree ("tenant_id","start_time");--> statement-breakpoint
CREATE INDEX "live_events_channel" ON "live_events" USING btree ("channel_id");--> statement-breakpoint
CREATE INDEX "live_events_announced_start" ON "live_events" USING btree ("announced_status","start_time");--> statement-breakpoint
CREATE INDEX "live_events_hold_start" ON "live_events" USING btree ("channel_hold","start_time");--> statement-breakpoint
CREATE INDEX "recorder_outputs_status" ON "recorder_outputs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "recorder_recordings_tenant_created" ON "recorder_recordings" USING btree ("tenant_id","create_date");--> statement-breakpoint
CREATE INDEX "recorder_recordings_status" ON "recorder_recordings" USING btree ("status","start");--> statement-breakpoint
CREATE INDEX "live_timeline_channel_start" ON "live_timeline_segments" USING btree ("channel_id","start_ms");