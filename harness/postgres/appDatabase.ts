import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';

import { REPO_ROOT } from '../repo';
import { withClient } from './connections';

/**
 * A database for the workflow's own tables (claim table, business table), owned by a login role of its
 * own, on the test server. n8n keeps its own tables in a schema of the same database but connects as the
 * server's admin user, so "the app's connections" and "n8n's connections" can be told apart by user, as
 * on a real server where n8n and the workflows' credentials use different database users.
 */
export interface AppDatabase {
	name: string;
	/** The app role's login: what the workflow credentials use. */
	role: string;
	appUrl: string;
	/** The same database as the server's admin user: n8n's own connection and the test's checks. */
	adminUrl: string;
	drop(): Promise<void>;
}

/** The server's own database as the app database, used as its admin (nothing to drop). */
export function serverDatabase(serverUrl: string): AppDatabase {
	const url = new URL(serverUrl);
	return {
		name: decodeURIComponent(url.pathname.slice(1)),
		role: decodeURIComponent(url.username),
		appUrl: serverUrl,
		adminUrl: serverUrl,
		drop: async () => {},
	};
}

export async function createAppDatabase(serverUrl: string, prefix: string): Promise<AppDatabase> {
	const suffix = randomBytes(4).toString('hex');
	const name = `${prefix}_${suffix}`;
	const role = `${prefix}_app_${suffix}`;
	const password = randomBytes(12).toString('hex');
	// Owner of the database = owner of its public schema (PostgreSQL 15+), so the app role may create
	// its tables the way the node's "Create Table If Missing" does.
	await withClient(serverUrl, async (admin) => {
		await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
		await admin.query(`CREATE DATABASE ${name} OWNER ${role}`);
	});
	const appUrl = new URL(serverUrl);
	appUrl.pathname = `/${name}`;
	appUrl.username = role;
	appUrl.password = password;
	const adminUrl = new URL(serverUrl);
	adminUrl.pathname = `/${name}`;
	return {
		name,
		role,
		appUrl: appUrl.toString(),
		adminUrl: adminUrl.toString(),
		drop: () =>
			withClient(serverUrl, async (admin) => {
				await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
				await admin.query(`DROP ROLE IF EXISTS ${role}`);
			}),
	};
}

/** workflows/processed_events.sql: the claim table and the templates' example business_log. */
export function tablesSql(): string {
	return readFileSync(join(REPO_ROOT, 'workflows', 'processed_events.sql'), 'utf8');
}

/** How many business_log rows each of these keys has (keys without one are left out). */
export async function businessRowsPerKey(
	db: Pool,
	keys: string[],
): Promise<Record<string, number>> {
	const { rows } = await db.query<{ event_key: string; n: number }>(
		'SELECT event_key, count(*)::int AS n FROM business_log WHERE event_key = ANY($1) GROUP BY event_key',
		[keys],
	);
	return Object.fromEntries(rows.map((row) => [row.event_key, row.n]));
}

/** How many claim rows (processed_events) this key has: 0 or 1. */
export async function claimRows(db: Pool, key: string): Promise<number> {
	const { rowCount } = await db.query('SELECT 1 FROM processed_events WHERE key = $1', [key]);
	return rowCount ?? 0;
}
