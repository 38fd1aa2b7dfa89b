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
ALTER TABLE "live_timeline_segments" ADD CONSTRAINT "live_timeline_segments_channel_id_live_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."live_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "live_timeline_channel_start" ON "live_timeline_segments" USING btree ("channel_id","start_ms");