import type { Pool } from 'pg';

/**
 * Real, planned failures of the template's example business step without touching the template: a
 * trigger on the test's business_log raises for keys listed in storm_failures while they still have
 * failures left. The test drains one failure each time the workflow answers "failed" (500) for a key,
 * so the provider's retry of the same event can then succeed. (The trigger cannot count down itself:
 * its raise rolls back its own writes.)
 */
export class InjectedFailures {
	constructor(private readonly pool: Pool) {}

	/** Run as the owner of business_log (the app role). */
	static readonly installSql = `
		CREATE TABLE storm_failures (
			event_key text PRIMARY KEY,
			failures_left integer NOT NULL CHECK (failures_left >= 0)
		);
		CREATE FUNCTION storm_injected_failure() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF EXISTS (SELECT 1 FROM storm_failures WHERE event_key = NEW.event_key AND failures_left > 0) THEN
				RAISE EXCEPTION 'injected business failure for %', NEW.event_key;
			END IF;
			-- A real business step takes a moment; 20 ms lets the mid-run outage catch one in flight.
			PERFORM pg_sleep(0.02);
			RETURN NEW;
		END $$;
		CREATE TRIGGER storm_injected_failure BEFORE INSERT ON business_log
			FOR EACH ROW EXECUTE FUNCTION storm_injected_failure();`;

	async fill(failures: Array<{ key: string; failures: number }>): Promise<void> {
		const planned = failures.filter((entry) => entry.failures > 0);
		await this.pool.query(
			'INSERT INTO storm_failures (event_key, failures_left) SELECT * FROM unnest($1::text[], $2::int[])',
			[planned.map((entry) => entry.key), planned.map((entry) => entry.failures)],
		);
	}

	/** One failure of this key happened; true when it was a planned one still pending. */
	async drainOne(key: string): Promise<boolean> {
		const { rowCount } = await this.pool.query(
			'UPDATE storm_failures SET failures_left = failures_left - 1 WHERE event_key = $1 AND failures_left > 0',
			[key],
		);
		return (rowCount ?? 0) > 0;
	}

	/** Planned failures that never happened. */
	async remaining(): Promise<number> {
		const { rows } = await this.pool.query(
			'SELECT coalesce(sum(failures_left), 0)::int AS n FROM storm_failures',
		);
		return rows[0].n;
	}
}
