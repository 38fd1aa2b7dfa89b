CREATE TABLE "recorder_auto_sessions" (
	"session_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"recording_id" uuid NOT NULL,
	"ended" boolean DEFAULT false NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "live_channel_sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"channel_id" uuid NOT NULL,
	"start_ms" bigint NOT NULL,
	"live_until_ms" bigint,
	"lost_at" timestamp with time zone,
	"end_ms" bigint,
	"auto_record" jsonb NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "live_channels" ADD COLUMN "auto_record" jsonb DEFAULT '{"enabled":false,"archive":{"enabled":false,"delaySeconds":0,"public":false,"expirationDate":null},"outputs":[]}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "recorder_auto_sessions" ADD CONSTRAINT "recorder_auto_sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "live_channel_sessions" ADD CONSTRAINT "live_channel_sessions_channel_id_live_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."live_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "live_channel_sessions_channel" ON "live_channel_sessions" USING btree ("channel_id","end_ms");--> statement-breakpoint
CREATE INDEX "live_channel_sessions_end" ON "live_channel_sessions" USING btree ("end_ms");