/**
 * Finish Step commits without waiting for its WAL to reach disk; Start Step waits. So a crash of the
 * database before the event's Complete can lose a step's result, never its start: the next run finds the
 * step Uncertain (or Done, once a later commit has written the WAL), never Run. Shown on a server of the
 * test's own whose WAL writer is held back (an asynchronous commit's WAL stays in the server's memory),
 * stopped with an immediate shutdown (`pg_ctl stop -m immediate`) and started again on the WAL it wrote.
 */
import { Client } from 'pg';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../../nodes/Idempotency/IdempotencyClaim.node';
import { IdempotencyKey } from '../../../nodes/Idempotency/IdempotencyKey.node';
import { IdempotencyStep } from '../../../nodes/Idempotency/IdempotencyStep.node';
import { executeContext, webhookItem } from '../../../harness/node/executeContext';
import { credentialsFromUrl } from '../../../harness/postgres/connections';
import { OwnPostgres } from '../../../harness/postgres/server';

let server: OwnPostgres;
beforeAll(async () => {
	// Nothing else may write WAL while the WAL writer is held back (see asyncCommit.test.ts).
	server = await OwnPostgres.start({
		settings: { autovacuum: 'off', bgwriter_lru_maxpages: '0', checkpoint_timeout: '1h' },
	});
}, 60_000);
afterAll(async () => {
	await server?.stop();
});

const TABLE = 'crash_steps';
const STEP = 'charge card';
const idempotencyOf = (item: INodeExecutionData) => item.json.idempotency as IDataObject;

async function sql<R>(text: string, values: unknown[] = []): Promise<R[]> {
	const client = new Client({ connectionString: server.url });
	await client.connect();
	try {
		return (await client.query(text, values)).rows as R[];
	} finally {
		await client.end();
	}
}

/** Bytes of WAL inserted but not yet written out: what a crash now would lose. */
async function walNotWritten(): Promise<number> {
	const [row] = await sql<{ bytes: number }>(
		'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), pg_current_wal_flush_lsn())::float8 AS bytes',
	);
	return row.bytes;
}

/** The Claim node (lease): its outputs New and Duplicate. */
async function claim(
	id: string,
): Promise<{ created: INodeExecutionData[]; duplicate: INodeExecutionData[] }> {
	const [created, duplicate] = await new IdempotencyClaim().execute.call(
		executeContext([webhookItem(JSON.stringify({ id }))], {
			parameters: {
				keySource: 'auto',
				claimMode: 'lease',
				leaseSeconds: 300,
				options: { table: TABLE },
			},
			credentials: credentialsFromUrl(server.url),
		}),
	);
	return { created, duplicate };
}

/** Start or Finish Step on the claimed item; the outputs as the node gives them. */
function step(claimed: INodeExecutionData, operation: 'start' | 'finish', stepName = STEP) {
	return new IdempotencyStep().execute.call(
		executeContext([claimed], {
			parameters: {
				operation,
				stepName,
				resultSource: 'custom',
				resultJson: '{"charge":"ch_1"}',
				options: { table: TABLE },
			},
			perItem: (name) =>
				name === 'key' || name === 'claimId' ? idempotencyOf(claimed)[name] : undefined,
			credentials: credentialsFromUrl(server.url),
			nodeName: 'Idempotency Step',
			nodeType: 'idempotencyStep',
		}),
	);
}

function complete(claimed: INodeExecutionData) {
	return new IdempotencyKey().execute.call(
		executeContext([claimed], {
			parameters: { operation: 'complete', options: { table: TABLE } },
			perItem: (name) => idempotencyOf(claimed)[name],
			credentials: credentialsFromUrl(server.url),
			nodeName: 'Idempotency Key',
			nodeType: 'idempotencyKey',
		}),
	);
}

/** An event claimed and its step started: its Run output, the start's WAL written. */
async function claimedAndStarted(id: string): Promise<INodeExecutionData> {
	const [claimed] = (await claim(id)).created;
	const [run] = await step(claimed, 'start');
	expect(run).toHaveLength(1);
	expect(await walNotWritten()).toBe(0);
	return claimed;
}

/** After the crash: the event's lease ends (its execution died with the database) and a retry takes it over. */
async function takenOver(id: string): Promise<INodeExecutionData> {
	await sql(`UPDATE ${TABLE} SET lease_until = now() - interval '1 second' WHERE key = $1`, [
		`evt:${id}`,
	]);
	const [retried] = (await claim(id)).created;
	expect(idempotencyOf(retried)).toMatchObject({ isNew: true, reclaimed: true });
	return retried;
}

const statusOf = ([run, done, uncertain]: INodeExecutionData[][]) => ({
	run: run.length,
	done: done.map((item) => (idempotencyOf(item).step as IDataObject).result),
	uncertain: uncertain.length,
});

beforeEach(async () => {
	// Tables made (DDL commits) before the WAL writer is held back: only the test's own statements follow.
	await claimedAndStarted(`warm-${Date.now()}`);
	await server.holdBackWalWriter();
});

describe('a database crash between Finish Step and Complete', () => {
	it("loses only the Finish's result: the next run finds the step Uncertain, never Run", async () => {
		const claimed = await claimedAndStarted('lost-finish');
		const [finished] = await step(claimed, 'finish');
		expect(finished).toHaveLength(1);
		// Answered before its WAL was written: the commit did not wait for it.
		expect(await walNotWritten()).toBeGreaterThan(0);

		await server.crash();
		const retried = await takenOver('lost-finish');
		expect(statusOf(await step(retried, 'start'))).toEqual({ run: 0, done: [], uncertain: 1 });
	}, 60_000);

	it('keeps the Finish once a later commit waited for its WAL: WAL is written in order, so it is Done', async () => {
		const claimed = await claimedAndStarted('finish-then-start');
		await step(claimed, 'finish');
		expect(await walNotWritten()).toBeGreaterThan(0);
		// The event's next step starts: a commit that waits for the WAL, the Finish's included.
		const [next] = await step(claimed, 'start', 'send receipt');
		expect(next).toHaveLength(1);
		expect(await walNotWritten()).toBe(0);

		await server.crash();
		const retried = await takenOver('finish-then-start');
		expect(statusOf(await step(retried, 'start'))).toEqual({
			run: 0,
			done: [{ charge: 'ch_1' }],
			uncertain: 0,
		});
	}, 60_000);

	it('after Complete the event is a duplicate and its marks are gone', async () => {
		const claimed = await claimedAndStarted('completed');
		await step(claimed, 'finish');
		await complete(claimed);
		expect(await walNotWritten()).toBe(0);

		await server.crash();
		const again = await claim('completed');
		expect([again.created.length, again.duplicate.length]).toEqual([0, 1]);
		expect(await sql(`SELECT 1 FROM ${TABLE}_steps WHERE key = $1`, ['evt:completed'])).toEqual([]);
	}, 60_000);
});
