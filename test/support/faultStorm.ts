// The fault tests (test/faults): a storm of retried deliveries through the Claim and Key nodes while a fault
// happens to the suite's own server (harness/faults/faultServer.ts), and what came of every event.
import { Pool } from 'pg';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { credentialsFromUrl } from '../../harness/postgres/connections';
import type { FaultServer } from '../../harness/faults/faultServer';
import { seededRandom } from '../../harness/webhooks/seededRandom';
import { planStorm } from './stormPlan';
import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { settleClaimed } from './settleClaimed';

/**
 * The storm on `on`'s server (the claims as `user` when given; the business step on `business`'s server,
 * default the same), then its outcome, logged: no event lost or run twice, none left held, every delivery
 * answered; unless `settled` is false, no Complete or Release failed either (they wait a fault out).
 */
export async function stormEveryEventOnce(
	on: FaultServer,
	storm: Omit<FaultStormOptions, 'credentials' | 'businessUrl'> & {
		user?: string;
		business?: FaultServer;
		settled?: boolean;
	},
): Promise<FaultStormReport> {
	const credentials = {
		...credentialsFromUrl(on.server.url),
		...(storm.user && { user: storm.user }),
	};
	const business = storm.business ?? on;
	const report = await runFaultStorm({ ...storm, credentials, businessUrl: business.server.url });
	const keys = Array.from({ length: storm.events }, (_, i) => `evt:evt_storm_${storm.table}_${i}`);
	const outcome = await stormOutcome(on.admin, storm.table, keys, business.admin);
	console.log(`${storm.table} storm: ${JSON.stringify({ ...report, outcome }, null, 1)}`);
	if (storm.settled !== false) {
		expect(report.errors.complete).toEqual({});
		expect(report.errors.release).toEqual({});
	}
	expect(report.undone).toEqual([]);
	expect(outcome).toEqual({ doubled: [], missing: [], notCompleted: [] });
	return report;
}

export interface FaultStormOptions {
	/** The Idempotency Postgres credential the nodes use. */
	credentials: object;
	/** The business step's database: `business_log (event_key)` there gets one row per run of the step. */
	businessUrl: string;
	/** The claim table (the node creates it). */
	table: string;
	events: number;
	seed: number;
	/** Events delivered at once; each is delivered 1–3 times at once, every delivery retried until it is done. */
	inFlight?: number;
	/** The fault: started once `afterEvents` events are done; resolves when it has been cleared. */
	fault: { afterEvents: number; run: () => Promise<void> };
	/** How long deliveries keep being retried after the fault was cleared. */
	settleMs?: number;
}

export type Stage = 'claim' | 'business' | 'release' | 'complete';

export interface FaultStormReport {
	deliveries: number;
	attempts: number;
	/** Error messages by stage (the node's own words, a business step's Postgres error), with counts. */
	errors: Record<Stage, Record<string, number>>;
	/** Keys whose deliveries were still not answered "done" when the storm ended: lost or stuck. */
	undone: string[];
	faultSeconds: number;
	seconds: number;
}

/**
 * A storm of webhook deliveries through the Claim and Key nodes (claim → business step → Complete, or
 * Release when the step fails), as the node template runs them, while `fault` happens to the server.
 * A delivery that fails (the node threw, or the event is still in progress) is retried after 0.1–0.4 s,
 * as a provider retries a 5xx or a 409, until it is answered "done" (processed, or a completed duplicate).
 */
export async function runFaultStorm(options: FaultStormOptions): Promise<FaultStormReport> {
	const { credentials, table } = options;
	const random = seededRandom(options.seed);
	const plan = planStorm({
		events: options.events,
		seed: options.seed,
		failureRate: 0,
		maxCopies: 3,
		tag: table,
	});
	const business = new Pool({ connectionString: options.businessUrl, max: 4 });
	business.on('error', () => undefined); // the fault cuts its connections too
	const claimNode = new IdempotencyClaim();
	const errors: FaultStormReport['errors'] = { claim: {}, business: {}, release: {}, complete: {} };
	const failed = (stage: Stage, error: unknown) => {
		const message = (error as Error).message;
		errors[stage][message] = (errors[stage][message] ?? 0) + 1;
	};

	const claim = (body: string) =>
		claimNode.execute.call(
			executeContext([webhookItem(body)], {
				parameters: {
					keySource: 'auto',
					claimMode: 'lease',
					leaseSeconds: 300,
					options: { table },
				},
				credentials,
			}),
		);
	const settle = (operation: 'complete' | 'release', claimed: INodeExecutionData) =>
		settleClaimed(operation, claimed, { table, credentials });

	let attempts = 0;
	async function deliverOnce(body: string): Promise<boolean> {
		attempts++;
		let created: INodeExecutionData[];
		let duplicate: INodeExecutionData[];
		try {
			[created, duplicate] = await claim(body);
		} catch (error) {
			failed('claim', error);
			return false;
		}
		if (duplicate.length > 0)
			return (duplicate[0].json.idempotency as IDataObject).duplicateKind === 'completed';
		const claimed = created[0];
		try {
			await business.query('INSERT INTO business_log (event_key) VALUES ($1)', [
				(claimed.json.idempotency as IDataObject).key,
			]);
		} catch (error) {
			failed('business', error);
			await settle('release', claimed).catch((releaseError) => failed('release', releaseError));
			return false;
		}
		try {
			await settle('complete', claimed);
			return true;
		} catch (error) {
			failed('complete', error);
			return false;
		}
	}

	const started = Date.now();
	let doneEvents = 0;
	let fault: Promise<void> | undefined;
	let faultStarted = 0;
	let faultEnded = 0;
	const settleMs = options.settleMs ?? 20_000;
	const overdue = () => faultEnded > 0 && Date.now() > faultEnded + settleMs;
	async function deliverUntilDone(body: string): Promise<boolean> {
		while (!overdue()) {
			if (await deliverOnce(body)) return true;
			await new Promise((resolve) => setTimeout(resolve, 100 + random() * 300));
		}
		return false;
	}

	const startFault = () => {
		faultStarted = Date.now();
		fault = options.fault.run().then(() => void (faultEnded = Date.now()));
	};
	if (options.fault.afterEvents === 0) startFault();
	const undone: string[] = [];
	const queue = [...plan.bursts];
	await Promise.all(
		Array.from({ length: options.inFlight ?? 8 }, async () => {
			for (let burst = queue.shift(); burst; burst = queue.shift()) {
				const { event, copies } = burst;
				const done = await Promise.all(
					Array.from({ length: copies }, () => deliverUntilDone(event.body)),
				);
				if (done.includes(false)) undone.push(event.key);
				if (++doneEvents === options.fault.afterEvents) startFault();
			}
		}),
	);
	await fault;
	await business.end();
	return {
		deliveries: plan.deliveries,
		attempts,
		errors,
		undone,
		faultSeconds: (faultEnded - faultStarted) / 1000,
		seconds: (Date.now() - started) / 1000,
	};
}

/**
 * Each event's business rows and claim, as one summary: what was run twice, not at all, or is left held.
 * The claim table is read through `pool`, business_log through `business` (default: the same).
 */
export async function stormOutcome(
	pool: Pool,
	table: string,
	keys: string[],
	business: Pool = pool,
): Promise<{ doubled: string[]; missing: string[]; notCompleted: string[] }> {
	const doubled = await business.query<{ event_key: string }>(
		'SELECT event_key FROM business_log GROUP BY event_key HAVING count(*) > 1 ORDER BY 1 LIMIT 10',
	);
	const missing = await business.query<{ k: string }>(
		'SELECT k FROM unnest($1::text[]) AS k WHERE NOT EXISTS (SELECT 1 FROM business_log WHERE event_key = k) ORDER BY 1 LIMIT 10',
		[keys],
	);
	// A compact table says "processing" with a lease_until; a completed claim has none.
	const held = await pool.query<{ key: string }>(
		`SELECT k AS key FROM unnest($1::text[]) AS k LEFT JOIN ${table} c ON c.key = k
		 WHERE c.key IS NULL OR c.lease_until IS NOT NULL ORDER BY 1 LIMIT 10`,
		[keys],
	);
	return {
		doubled: doubled.rows.map((row) => row.event_key),
		missing: missing.rows.map((row) => row.k),
		notCompleted: held.rows.map((row) => row.key),
	};
}
