CREATE TABLE "storage_deletions" (
	"prefix" text PRIMARY KEY NOT NULL,
	"due_at" timestamp with time zone NOT NULL
);
