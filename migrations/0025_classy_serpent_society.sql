CREATE TABLE "vod_output_chunks" (
	"asset_id" uuid NOT NULL,
	"output_id" text NOT NULL,
	"index" integer NOT NULL,
	"tenant_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"start_ms" bigint NOT NULL,
	"end_ms" bigint,
	"status" text DEFAULT 'Pending' NOT NULL,
	"progress_percent" integer DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"create_date" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "vod_output_chunks_asset_id_output_id_index_pk" PRIMARY KEY("asset_id","output_id","index")
);
--> statement-breakpoint
ALTER TABLE "vod_output_chunks" ADD CONSTRAINT "vod_output_chunks_asset_id_output_id_vod_outputs_asset_id_id_fk" FOREIGN KEY ("asset_id","output_id") REFERENCES "public"."vod_outputs"("asset_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "vod_output_chunks_status_lease" ON "vod_output_chunks" USING btree ("status","lease_until");