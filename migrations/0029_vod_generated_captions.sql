ALTER TABLE "vod_assets" ADD COLUMN "ai_captioning_language_code" text;--> statement-breakpoint
ALTER TABLE "vod_assets" ADD COLUMN "ai_captioning_status" text;--> statement-breakpoint
ALTER TABLE "vod_assets" ADD COLUMN "ai_captioning_error" text;