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
ALTER TABLE "live_events" ADD CONSTRAINT "live_events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "live_events" ADD CONSTRAINT "live_events_channel_id_live_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."live_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "live_events_tenant_start" ON "live_events" USING btree ("tenant_id","start_time");--> statement-breakpoint
CREATE INDEX "live_events_channel" ON "live_events" USING btree ("channel_id");--> statement-breakpoint
CREATE INDEX "live_events_announced_start" ON "live_events" USING btree ("announced_status","start_time");--> statement-breakpoint
CREATE INDEX "live_events_hold_start" ON "live_events" USING btree ("channel_hold","start_time");