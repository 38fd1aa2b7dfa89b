ALTER TABLE "watermarking_assets" ALTER COLUMN "vod_asset_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "watermarking_assets" ADD COLUMN "channel_id" uuid;--> statement-breakpoint
CREATE UNIQUE INDEX "watermarking_assets_channel" ON "watermarking_assets" USING btree ("channel_id");