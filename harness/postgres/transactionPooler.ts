import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

import { freePort } from '../freePort';
import { connectWhenReady } from './connections';
import { serverOwner } from './serverUser';

/**
 * A real PgBouncer in `pool_mode = transaction` in front of the test server, with fewer server
 * connections than clients, so consecutive statements of one client land on different server
 * connections, as behind any transaction pooler (PgBouncer, Supabase's pooler port). Debian's pgbouncer
 * 1.18 does not track prepared statements. PgBouncer refuses to run as root: as root it runs as `postgres`.
 */
export class TransactionPooler {
	/** The end of PgBouncer's log (its stderr). */
	log = '';

	private constructor(
		private readonly child: ChildProcess,
		private readonly dir: string,
		readonly port: number,
		/** The `[pgbouncer]` section. */
		private readonly settings: Record<string, string>,
	) {}

	/** Whether a `pgbouncer` binary is on the PATH. */
	static installed(): boolean {
		try {
			execFileSync('pgbouncer', ['--version'], { stdio: 'ignore' });
			return true;
		} catch {
			return false;
		}
	}

	/** `settings`: PgBouncer's own (server_login_retry, max_client_conn …) over the ones below. */
	static async start(
		serverUrl: string,
		serverConnections = 2,
		settings: Record<string, string | number> = {},
	): Promise<TransactionPooler> {
		const server = new URL(serverUrl);
		const user = decodeURIComponent(server.username);
		const password = decodeURIComponent(server.password);
		const dir = mkdtempSync(join(tmpdir(), 'idempotency-pgbouncer-'));
		chmodSync(dir, 0o777);
		const port = await freePort();
		writeFileSync(join(dir, 'users.txt'), `"${user}" "${password}"\n`);
		chmodSync(join(dir, 'users.txt'), 0o644);
		const section: Record<string, string> = {
			listen_addr: '127.0.0.1',
			listen_port: String(port),
			unix_socket_dir: dir,
			auth_type: 'trust',
			auth_file: join(dir, 'users.txt'),
			pool_mode: 'transaction',
			default_pool_size: String(serverConnections),
			max_client_conn: '500',
			ignore_startup_parameters: 'extra_float_digits,options',
		};
		for (const [name, value] of Object.entries(settings)) section[name] = String(value);
		writeConfig(dir, serverUrl, section);
		const child = spawn('pgbouncer', [join(dir, 'pgbouncer.ini')], {
			stdio: ['ignore', 'ignore', 'pipe'],
			...serverOwner(),
		});
		const pooler = new TransactionPooler(child, dir, port, section);
		child.stderr!.on(
			'data',
			(chunk: Buffer) => (pooler.log = (pooler.log + chunk).slice(-100_000)),
		);
		try {
			const client = await connectWhenReady(
				{ connectionString: pooler.url(serverUrl) },
				{ timeoutMs: 15_000, starting: () => child.exitCode === null },
			);
			await client.query('SELECT 1');
			await client.end();
			return pooler;
		} catch (error) {
			await pooler.stop();
			throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${pooler.log}`);
		}
	}

	/**
	 * Points the pooler at another server and reloads it (SIGHUP, as the console's RELOAD), as an operator or
	 * a failover manager does once a standby is promoted. Clients stay connected to the pooler.
	 */
	repoint(serverUrl: string): void {
		writeConfig(this.dir, serverUrl, this.settings);
		this.child.kill('SIGHUP');
	}

	/**
	 * Queries through the pooler until it answers at once that server logins are failing (08P01): it made a
	 * login, and the server refused it (shutting down, starting up). A query that waits for a server
	 * connection instead is given up after 200 ms, and the next one sent.
	 */
	async untilLoginsFail(serverUrl: string, timeoutMs = 10_000): Promise<void> {
		for (const deadline = Date.now() + timeoutMs; ;) {
			const probe = new Client({ connectionString: this.url(serverUrl), query_timeout: 200 });
			probe.on('error', () => undefined);
			try {
				await probe.connect();
				await probe.query('SELECT 1');
			} catch (error) {
				if (/server login has been failing/.test((error as Error).message)) return;
			} finally {
				await probe.end().catch(() => undefined);
			}
			if (Date.now() > deadline)
				throw new Error(`PgBouncer did not refuse a query within ${timeoutMs} ms`);
			await new Promise((resolve) => setTimeout(resolve, 10));
		}
	}

	/** The server's URL with the pooler's address. */
	url(serverUrl: string): string {
		const url = new URL(serverUrl);
		url.hostname = '127.0.0.1';
		url.port = String(this.port);
		return url.toString();
	}

	async stop(): Promise<void> {
		if (this.child.exitCode === null) {
			await new Promise((resolve) => {
				this.child.once('exit', resolve);
				this.child.kill('SIGINT');
			});
		}
		rmSync(this.dir, { recursive: true, force: true });
	}
}

function writeConfig(dir: string, serverUrl: string, section: Record<string, string>): void {
	const server = new URL(serverUrl);
	const file = join(dir, 'pgbouncer.ini');
	writeFileSync(
		file,
		[
			'[databases]',
			`* = host=${server.hostname} port=${server.port || 5432}`,
			'[pgbouncer]',
			...Object.entries(section).map(([name, value]) => `${name} = ${value}`),
			'',
		].join('\n'),
	);
	chmodSync(file, 0o644);
}
