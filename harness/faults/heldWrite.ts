import { Client } from 'pg';

/**
 * Where an aimed event's write transaction (Complete With Write: the claim row locked by its Complete, then
 * the business insert) is held: `write`, right after its insert into business_log; `commit`, inside its
 * COMMIT (a deferred constraint trigger runs there, before the commit is written).
 */
export type HoldPoint = 'write' | 'commit';

/** The advisory lock class the holds use (the second key is hashtext of the event key). */
const LOCK_CLASS = 39;

/**
 * Run as the owner of business_log (a stack's appSql). A write of a key listed in held_writes at a point
 * waits there for a shared advisory lock the test holds exclusively (whileWriteHeld) until the fault lands.
 * Once the lock is gone (released, or the server restarted or failed over), the same write runs straight
 * through, so the transaction's retry after the fault is not held again.
 */
export const HOLD_WRITES_SQL = `
	CREATE TABLE held_writes (event_key text NOT NULL, at text NOT NULL, PRIMARY KEY (event_key, at));
	CREATE FUNCTION hold_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
		IF EXISTS (SELECT 1 FROM held_writes WHERE event_key = NEW.event_key AND at = TG_ARGV[0]) THEN
			PERFORM pg_advisory_xact_lock_shared(${LOCK_CLASS}, hashtext(NEW.event_key));
		END IF;
		RETURN NEW; END $$;
	CREATE TRIGGER hold_write AFTER INSERT ON business_log
		FOR EACH ROW EXECUTE FUNCTION hold_write('write');
	CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON business_log DEFERRABLE INITIALLY DEFERRED
		FOR EACH ROW EXECUTE FUNCTION hold_write('commit');`;

/** The held write transaction, as the fault is given it. */
export interface HeldWriter {
	/** Its server process (pg_terminate_backend ends the transaction). */
	pid: number;
	/** Lets the transaction go on (to meet a fault that is already there: a full disk). */
	release(): Promise<void>;
}

export interface HeldWrite<T> {
	key: string;
	at: HoldPoint;
	/** Milliseconds from whenReached until the write reached the hold. */
	waitedMs: number;
	fault: T;
}

/**
 * A hold on `key`'s next write transaction at `at` (HOLD_WRITES_SQL installed on the database `holderUrl`
 * reaches, as a user that may write held_writes): once the write reaches it, the claim row is locked by
 * its Complete and the business row written but not committed. Install it before the event is delivered.
 */
export class WriteHold {
	private released = false;

	private constructor(
		private readonly holder: Client,
		readonly key: string,
		readonly at: HoldPoint,
	) {}

	static async install(options: {
		holderUrl: string;
		key: string;
		at: HoldPoint;
	}): Promise<WriteHold> {
		const holder = new Client({ connectionString: options.holderUrl });
		holder.on('error', () => undefined); // the fault may end this session on purpose
		await holder.connect();
		await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS, options.key]);
		await holder.query(
			'INSERT INTO held_writes (event_key, at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
			[options.key, options.at],
		);
		return new WriteHold(holder, options.key, options.at);
	}

	/**
	 * Runs `fault` once the write waits at the hold. The hold ends when `fault` returns (or once the fault
	 * ended the holder's session); whatever the fault left of the transaction then goes on.
	 */
	async whenReached<T>(
		timeoutMs: number,
		fault: (writer: HeldWriter) => Promise<T>,
	): Promise<HeldWrite<T>> {
		const started = Date.now();
		try {
			let pid: number | undefined;
			while (pid === undefined) {
				if (Date.now() - started > timeoutMs)
					throw new Error(`${this.key}'s write never reached its hold (${this.at})`);
				// A two-key advisory lock shows its first key as classid and its second as objid (an oid).
				const { rows } = await this.holder.query<{ pid: number }>(
					`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1
					 AND objid::bigint = hashtext($2)::bigint & 4294967295 AND objsubid = 2`,
					[LOCK_CLASS, this.key],
				);
				pid = rows[0]?.pid;
				if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
			}
			const waitedMs = Date.now() - started;
			const value = await fault({ pid, release: () => this.release() });
			return { key: this.key, at: this.at, waitedMs, fault: value };
		} finally {
			await this.release();
		}
	}

	/** Lets the held write go on; idempotent. */
	async release(): Promise<void> {
		if (this.released) return;
		this.released = true;
		await this.holder.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
		await this.holder.end().catch(() => undefined);
	}
}
