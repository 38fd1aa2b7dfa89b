ALTER TABLE "streaming_assets" ADD COLUMN "frames_taken_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "streaming_assets" ADD COLUMN "frames_final" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "streaming_assets" ADD COLUMN "frames_asset_status" text;