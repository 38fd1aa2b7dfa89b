CREATE TABLE "rate_limit_counts" (
	"key" text NOT NULL,
	"window" bigint NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "rate_limit_counts_key_window_pk" PRIMARY KEY("key","window")
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "request_id" text;--> statement-breakpoint
ALTER TABLE "webhook_secrets" ADD COLUMN "previous_secret" text;--> statement-breakpoint
ALTER TABLE "webhook_secrets" ADD COLUMN "previous_secret_expiration_date" timestamp with time zone;