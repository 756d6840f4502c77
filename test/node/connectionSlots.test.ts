import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { poolFor } from '../../nodes/Idempotency/transport/poolRegistry';
import { credentialsFromUrl } from '../../harness/postgres/connections';
import { executeContext, webhookItem } from '../../harness/node/executeContext';
import { OwnPostgres } from '../../harness/postgres/server';

/** A server with room for 8 connections, and three n8n processes that each keep a default pool of 10. */
const MAX_CONNECTIONS = 8;
const PROCESSES = 3;
const POOL_SIZE = 10;

let server: OwnPostgres;
beforeAll(async () => {
	server = await OwnPostgres.start({
		settings: { max_connections: String(MAX_CONNECTIONS), superuser_reserved_connections: '0' },
	});
}, 60_000);
afterAll(async () => {
	await server?.stop();
});

// Each process has a pool of its own; a different password (ignored by trust auth) gives each its own pool here.
const processCredentials = (process: number) => ({
	...credentialsFromUrl(server.url),
	password: `process-${process}`,
});

const node = new IdempotencyClaim();

function deliver(process: number, id: string): Promise<INodeExecutionData[][]> {
	return node.execute.call(
		executeContext([webhookItem(JSON.stringify({ id }))], {
			parameters: {
				keySource: 'auto',
				claimMode: 'lease',
				leaseSeconds: 300,
				options: { table: 'slots' },
			},
			credentials: processCredentials(process),
		}),
	);
}

const noSlotMessage = new RegExp(
	`has no connection slot left .*processes × pool size must stay below the server's max_connections`,
);
function expectNoSlotError(reason: unknown): void {
	expect((reason as Error).message).toMatch(noSlotMessage);
}

/** The one item leaves on New, claimed now: nothing an earlier, refused attempt did stands in its way. */
function expectNew([fresh, duplicate]: INodeExecutionData[][]): void {
	expect([fresh.length, duplicate.length]).toEqual([1, 0]);
	expect((fresh[0].json.idempotency as IDataObject).isNew).toBe(true);
}

/** Each retry goes to the next process, as a load balancer in front of several n8n processes sends it. */
async function retryUntilAnswered(event: number, id: string): Promise<INodeExecutionData[][]> {
	for (let attempt = 0; ; attempt++) {
		try {
			return await deliver((event + attempt) % PROCESSES, id);
		} catch (error) {
			expectNoSlotError(error);
			if (attempt === 2 * PROCESSES) throw error;
		}
	}
}

/** The name the node's connections carry in pg_stat_activity (transport/postgresCredentials). */
const NODE_CONNECTIONS = "application_name = 'n8n-nodes-idempotency'";

/** Looks every 20 ms, for 15 s at most, until `left` counts none; then fails with the count and `what`. */
async function untilNone(left: () => Promise<number>, what: string): Promise<void> {
	// A deadline, not a count of looks: a busy machine can take seconds to see a socket closed.
	const deadline = Date.now() + 15_000;
	for (;;) {
		const n = await left();
		if (n === 0) return;
		if (Date.now() > deadline) throw new Error(`${n} ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

/**
 * Rows whose key starts with `prefix`, read through an idle connection of the processes' own pools (their
 * idle connections hold every slot); then every connection of the processes is ended by the server
 * (pg_terminate_backend, as an administrator would), and the slots are seen free in pg_stat_activity.
 */
async function claimedRows(prefix: string): Promise<number> {
	const pool = await poolFor(processCredentials(0));
	const client = await pool.connect();
	try {
		const { rows } = await client.query<{ n: number }>(
			`SELECT count(*)::int AS n FROM slots WHERE key LIKE $1 || '%'`,
			[prefix],
		);
		await client.query(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${NODE_CONNECTIONS} AND pid <> pg_backend_pid()`,
		);
		await untilNone(
			async () =>
				(
					await client.query<{ n: number }>(
						`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${NODE_CONNECTIONS} AND pid <> pg_backend_pid()`,
					)
				).rows[0].n,
			'connections still open',
		);
		// The pools learn of the ends from their sockets: until they have, one could hand the next test an
		// idle client whose backend is gone ("terminating connection due to administrator command", seen in CI).
		await untilNone(async () => {
			const pools = await Promise.all(
				Array.from({ length: PROCESSES }, (_, process) => poolFor(processCredentials(process))),
			);
			return pools.reduce((sum, each) => sum + each.idleCount, 0);
		}, 'ended connections still idle in the pools');
		return rows[0].n;
	} finally {
		// This last connection leaves the pool too: every process starts the next test holding none.
		client.release(true);
	}
}

describe('more n8n processes × pool size than the server has connections', () => {
	it('a delivery that finds no slot fails with a clear error and claims nothing; its retry is processed once', async () => {
		await deliver(0, 'warm-up');
		const events = Array.from({ length: 60 }, (_, i) => `evt_slot_${i}`);
		const firstTry = await Promise.allSettled(events.map((id, i) => deliver(i % PROCESSES, id)));
		const refused = firstTry.filter(
			(result) => result.status === 'rejected',
		) as PromiseRejectedResult[];
		expect(refused.length).toBeGreaterThan(0);
		for (const { reason } of refused) expectNoSlotError(reason);
		// The provider retries what failed, one at a time, until a process answers: a retry that lands on a
		// process whose pool holds no connection while the others' idle connections hold every slot is
		// refused again, the same way, and the next retry reaches another process.
		let newCount = firstTry.filter(
			(result) => result.status === 'fulfilled' && result.value[0].length === 1,
		).length;
		for (const [i, result] of firstTry.entries()) {
			if (result.status === 'fulfilled') continue;
			expectNew(await retryUntilAnswered(i, events[i]));
			newCount++;
		}
		expect(newCount).toBe(events.length);
		expect(await claimedRows('evt:evt_slot_')).toBe(events.length);
	}, 60_000);

	it("a retry that reaches a process holding no connection, while another process's idle connections hold every slot, is refused the same way and claims nothing", async () => {
		const events = Array.from({ length: 2 * POOL_SIZE }, (_, i) => `evt_full_${i}`);
		// Each claim holds its connection 0.2 s, as on a busy server: a burst's deliveries all want one at once,
		// however a loaded test machine staggers their start (else one reuses another's and fewer are refused).
		const setup = await (await poolFor(processCredentials(0))).connect();
		try {
			await setup.query(
				'CREATE FUNCTION slow_claim() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.2); RETURN NEW; END $$',
			);
			await setup.query(
				'CREATE TRIGGER slow_claim BEFORE INSERT ON slots FOR EACH ROW EXECUTE FUNCTION slow_claim()',
			);
		} finally {
			setup.release(true); // the process starts the bursts holding no connection
		}
		// Two bursts on process 0: after the second, its pool holds every slot the server has, idle.
		const settled = [
			...(await Promise.allSettled(events.slice(0, POOL_SIZE).map((id) => deliver(0, id)))),
			...(await Promise.allSettled(events.slice(POOL_SIZE).map((id) => deliver(0, id)))),
		];
		const refused = events.filter((_, i) => settled[i].status === 'rejected');
		expect(refused.length).toBeGreaterThanOrEqual(2 * (POOL_SIZE - MAX_CONNECTIONS));
		for (const id of refused) {
			await expect(deliver(1, id)).rejects.toThrow(noSlotMessage);
			expectNew(await deliver(0, id));
		}
		expect(await claimedRows('evt:evt_full_')).toBe(events.length);
	}, 60_000);
});
