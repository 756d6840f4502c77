-- Tables for the bundled workflows. Run once by hand (psql -f workflows/processed_events.sql) when the
-- database user n8n connects with may not create tables; otherwise the Idempotency Claim node creates
-- processed_events itself ("Create Table If Missing", on by default). Safe to run again.

-- One row per idempotency key: the first delivery inserts it, every later one finds it. Fixed-width
-- columns come first: placed after the text key, each row would carry alignment padding. Columns stay
-- NULL until a claim needs them, and a NULL costs a row nothing.
CREATE TABLE IF NOT EXISTS processed_events (
	first_seen timestamptz NOT NULL DEFAULT now(),
	-- The last repeat delivery; NULL until the first repeat.
	last_seen timestamptz,
	-- Set only while a leased claim runs its business step: the claim is 'processing' while it is set.
	lease_until timestamptz,
	-- Deliveries of the key; NULL means one.
	deliveries integer,
	key text PRIMARY KEY,
	-- The 12 bytes of the current holder's claim ID.
	claim_token bytea,
	-- A kind byte and 128 bits of the payload's SHA-256, when Payload Fingerprint is on.
	fingerprint bytea,
	-- The answer Complete stored (Store Response), replayed to later repeats: json keeps its text exact.
	response json
);

-- A table made earlier with only (key, first_seen), such as the built-in-nodes template's, gets the
-- columns it lacks here, in the types of the node's original layout, as the node itself adds them. These
-- lines only add columns: existing keys stay, and count as completed. A table this file (or the node)
-- created keeps its claim ID as bytes: only a missing response column is added to it.
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'processed_events'::regclass
	               AND attname IN ('claim_token', 'fingerprint') AND atttypid = 'bytea'::regtype AND NOT attisdropped) THEN
		ALTER TABLE processed_events
			ADD COLUMN IF NOT EXISTS last_seen timestamptz,
			ADD COLUMN IF NOT EXISTS deliveries integer NOT NULL DEFAULT 1,
			ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'completed',
			ADD COLUMN IF NOT EXISTS lease_until timestamptz,
			ADD COLUMN IF NOT EXISTS claim_token text,
			ADD COLUMN IF NOT EXISTS fingerprint text;
	END IF;
END $$;

-- Stored responses (Idempotency Key → Complete → Store Response), in either layout; a table without this
-- column works for everything else.
ALTER TABLE processed_events ADD COLUMN IF NOT EXISTS response json;

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

-- Claim With Lease → Keep Event: the delivery kept with its claim until Complete drops it, retried from
-- here by Take Due Events (its due time is the claim's lease_until). Tables that keep no events need none.
CREATE TABLE IF NOT EXISTS processed_events_events (
	received_at timestamptz NOT NULL DEFAULT now(),
	dead_at timestamptz,
	attempts integer NOT NULL DEFAULT 1,
	key text PRIMARY KEY,
	content_type text,
	last_error text,
	headers json,
	scope text,
	body bytea NOT NULL
);
-- Event tables made before events had a scope (Take Due Events takes one scope's events):
ALTER TABLE processed_events_events ADD COLUMN IF NOT EXISTS scope text;

-- Idempotency Step: a row per step an event's run started (and its result once finished), deleted with the
-- claim by Complete and Release. Workflows that guard no step need none.
CREATE TABLE IF NOT EXISTS processed_events_steps (
	started_at timestamptz NOT NULL DEFAULT now(),
	finished_at timestamptz,
	attempts integer NOT NULL DEFAULT 1,
	key text NOT NULL,
	step text NOT NULL,
	claim_id text,
	result json,
	PRIMARY KEY (key, step)
);

-- The templates' example business step writes here. Replace it with your own table or step.
CREATE TABLE IF NOT EXISTS business_log (
	id bigserial PRIMARY KEY,
	event_key text NOT NULL,
	event_type text,
	created_at timestamptz NOT NULL DEFAULT now()
);
