import { Pool } from 'pg';

import {
	connectionIdentity,
	poolConfig,
	sameConnection,
	type ConnectionIdentity,
	type PostgresCredentials,
} from './postgresCredentials';
import { connectsWithTls } from './tlsDecision';
import { processClock } from '../../shared/processClock';

interface PoolEntry {
	identity: ConnectionIdentity;
	pool: Promise<Pool>;
	lastUsed: number;
	/** The last error an idle connection reported; kept for diagnostics only. */
	lastIdleError?: Error;
}

const POOL_IDLE_MS = 5 * 60_000;
const SWEEP_EVERY_MS = 60_000;

// A process holds a pool per credential, a handful at most: a scan compares them field by field.
const pools: PoolEntry[] = [];
let sweeper: ReturnType<typeof setInterval> | undefined;

/** One pg.Pool per credential for the whole n8n process, reused by every execution and closed when idle. */
export async function poolFor(credentials: PostgresCredentials): Promise<Pool> {
	return poolEntryFor(credentials).pool;
}

function poolEntryFor(credentials: PostgresCredentials): PoolEntry {
	let entry = pools.find((candidate) => sameConnection(candidate.identity, credentials));
	if (!entry) {
		const created: PoolEntry = {
			identity: connectionIdentity(credentials),
			pool: Promise.resolve(undefined as unknown as Pool),
			lastUsed: processClock.nowMs(),
		};
		created.pool = createPool(credentials, created);
		// A pool that could not be set up is forgotten, so the next execution tries afresh.
		created.pool.catch(() => forget(created));
		pools.push(created);
		entry = created;
		startSweeper();
	}
	entry.lastUsed = processClock.nowMs();
	return entry;
}

function forget(entry: PoolEntry): void {
	const index = pools.indexOf(entry);
	if (index >= 0) pools.splice(index, 1);
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

/**
 * Ends pools unused for `idleMs` with no connection checked out. Nothing else ends a pool: n8n gives a
 * node no shutdown hook, and a pool's idle connections (`allowExitOnIdle`) keep no process alive.
 */
async function closeIdlePools(idleMs: number): Promise<void> {
	const now = processClock.nowMs();
	for (const entry of [...pools]) {
		if (now - entry.lastUsed < idleMs) continue;
		const pool = await entry.pool.catch(() => undefined);
		if (pool && pool.totalCount - pool.idleCount > 0) continue;
		forget(entry);
		await pool?.end().catch(() => undefined);
	}
	if (pools.length === 0 && sweeper) {
		clearInterval(sweeper);
		sweeper = undefined;
	}
}
