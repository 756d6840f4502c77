-- Tables for the bundled workflows. Run once by hand (psql -f workflows/processed_events.sql) when the
-- database user n8n connects with may not create tables; otherwise the Idempotency Claim node creates
-- processed_events itself ("Create Table If Missing", on by default). Safe to run again.

-- One row per idempotency key: the first delivery inserts it, every later one finds it. Fixed-width
-- columns come first: placed after the text key, each row would carry alignment padding.
CREATE TABLE IF NOT EXISTS processed_events (
	first_seen timestamptz NOT NULL DEFAULT now(),
	last_seen timestamptz,
	lease_until timestamptz,
	deliveries integer NOT NULL DEFAULT 1,
	key text PRIMARY KEY,
	-- 'processing' while a lease-mode claim runs its business step, 'completed' afterwards.
	status text NOT NULL DEFAULT 'completed',
	claim_token text,
	fingerprint text
);

-- A table made earlier with only (key, first_seen), such as the built-in-nodes template's, gets the
-- newer columns here. These lines only add columns: existing keys stay, and count as completed.
ALTER TABLE processed_events ADD COLUMN IF NOT EXISTS last_seen timestamptz;
ALTER TABLE processed_events ADD COLUMN IF NOT EXISTS deliveries integer NOT NULL DEFAULT 1;
ALTER TABLE processed_events ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'completed';
ALTER TABLE processed_events ADD COLUMN IF NOT EXISTS lease_until timestamptz;
ALTER TABLE processed_events ADD COLUMN IF NOT EXISTS claim_token text;
ALTER TABLE processed_events ADD COLUMN IF NOT EXISTS fingerprint text;

-- The cleanup workflow deletes by age; this index keeps that cheap on big tables.
CREATE INDEX IF NOT EXISTS processed_events_first_seen_idx ON processed_events (first_seen);

-- Key Source "Polled Item" with Value Is Higher / Value Is a Date Later: one watermark per scope, the
-- highest value passed so far (and the one before it). Value Is New needs no table of its own.
CREATE TABLE IF NOT EXISTS processed_events_watermarks (
	advanced_at timestamptz NOT NULL DEFAULT now(),
	scope text PRIMARY KEY,
	kind text NOT NULL CHECK (kind IN ('number', 'date')),
	mark text NOT NULL,
	previous_mark text,
	advanced_by text
);

-- The templates' example business step writes here. Replace it with your own table or step.
CREATE TABLE IF NOT EXISTS business_log (
	id bigserial PRIMARY KEY,
	event_key text NOT NULL,
	event_type text,
	created_at timestamptz NOT NULL DEFAULT now()
);
