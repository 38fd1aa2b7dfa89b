ALTER TABLE "live_channels" ADD COLUMN "srt_port" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "live_channels_srt_port" ON "live_channels" USING btree ("srt_port");