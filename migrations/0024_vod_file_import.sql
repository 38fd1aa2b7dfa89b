ALTER TABLE "vod_files" ADD COLUMN "import_url" text;--> statement-breakpoint
ALTER TABLE "vod_files" ADD COLUMN "bytes_received" bigint;--> statement-breakpoint
ALTER TABLE "vod_files" ADD COLUMN "error_message" text;