import { Pool } from 'pg';

import { credentialIdentity, poolConfig, type PostgresCredentials } from './postgresCredentials';
import { connectsWithTls } from './tlsDecision';

interface PoolEntry {
	pool: Promise<Pool>;
	lastUsed: number;
	/** The last error an idle connection reported; kept for diagnostics only. */
	lastIdleError?: Error;
}

const POOL_IDLE_MS = 5 * 60_000;
const SWEEP_EVERY_MS = 60_000;

const pools = new Map<string, PoolEntry>();
let sweeper: ReturnType<typeof setInterval> | undefined;

/** One pg.Pool per credential for the whole n8n process, reused by every execution and closed when idle. */
export async function poolFor(credentials: PostgresCredentials): Promise<Pool> {
	return poolEntryFor(credentials).pool;
}

function poolEntryFor(credentials: PostgresCredentials): PoolEntry {
	const identity = credentialIdentity(credentials);
	let entry = pools.get(identity);
	if (!entry) {
		const created: PoolEntry = {
			pool: Promise.resolve(undefined as unknown as Pool),
			lastUsed: Date.now(),
		};
		created.pool = createPool(credentials, created);
		// A pool that could not be set up is forgotten, so the next execution tries afresh.
		created.pool.catch(() => pools.get(identity) === created && pools.delete(identity));
		pools.set(identity, created);
		entry = created;
		startSweeper();
	}
	entry.lastUsed = Date.now();
	return entry;
}

async function createPool(credentials: PostgresCredentials, entry: PoolEntry): Promise<Pool> {
	const pool = new Pool(poolConfig(credentials, await connectsWithTls(credentials)));
	// Without a listener, a server restart or pg_terminate_backend on an idle connection would crash n8n.
	pool.on('error', (error) => {
		entry.lastIdleError = error;
	});
	return pool;
}

function startSweeper(): void {
	if (sweeper) return;
	sweeper = setInterval(() => void closeIdlePools(POOL_IDLE_MS), SWEEP_EVERY_MS);
	// The sweeper alone must not keep a process alive.
	sweeper.unref();
}

/** Ends pools unused for `idleMs` with no connection checked out. */
export async function closeIdlePools(idleMs: number): Promise<number> {
	const now = Date.now();
	let closed = 0;
	for (const [identity, entry] of pools) {
		if (now - entry.lastUsed < idleMs) continue;
		const pool = await entry.pool.catch(() => undefined);
		if (pool && pool.totalCount - pool.idleCount > 0) continue;
		pools.delete(identity);
		await pool?.end().catch(() => undefined);
		closed++;
	}
	if (pools.size === 0 && sweeper) {
		clearInterval(sweeper);
		sweeper = undefined;
	}
	return closed;
}

/** Ends every pool (tests, benchmarks and shutdown). */
export async function closeAllPools(): Promise<void> {
	await closeIdlePools(-1);
}

export function openPoolCount(): number {
	return pools.size;
}
