import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../../harness/freePort';
import { connectWhenReady } from '../../harness/postgres/connections';
import { serverOwner } from '../../harness/postgres/serverUser';

/**
 * A real PgBouncer in `pool_mode = transaction` in front of the test server, with fewer server
 * connections than clients, so consecutive statements of one client land on different server
 * connections, as behind any transaction pooler (PgBouncer, Supabase's pooler port). Debian's pgbouncer
 * 1.18 does not track prepared statements. PgBouncer refuses to run as root: as root it runs as `postgres`.
 */
export class TransactionPooler {
	private constructor(
		private readonly child: ChildProcess,
		private readonly dir: string,
		readonly port: number,
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

	static async start(serverUrl: string, serverConnections = 2): Promise<TransactionPooler> {
		const server = new URL(serverUrl);
		const user = decodeURIComponent(server.username);
		const password = decodeURIComponent(server.password);
		const dir = mkdtempSync(join(tmpdir(), 'idempotency-pgbouncer-'));
		chmodSync(dir, 0o777);
		const port = await freePort();
		writeFileSync(join(dir, 'users.txt'), `"${user}" "${password}"\n`);
		writeFileSync(
			join(dir, 'pgbouncer.ini'),
			[
				'[databases]',
				`* = host=${server.hostname} port=${server.port || 5432}`,
				'[pgbouncer]',
				'listen_addr = 127.0.0.1',
				`listen_port = ${port}`,
				`unix_socket_dir = ${dir}`,
				'auth_type = trust',
				`auth_file = ${join(dir, 'users.txt')}`,
				'pool_mode = transaction',
				`default_pool_size = ${serverConnections}`,
				'max_client_conn = 500',
				'ignore_startup_parameters = extra_float_digits,options',
				'',
			].join('\n'),
		);
		for (const file of ['users.txt', 'pgbouncer.ini']) chmodSync(join(dir, file), 0o644);
		const child = spawn('pgbouncer', [join(dir, 'pgbouncer.ini')], {
			stdio: ['ignore', 'ignore', 'pipe'],
			...serverOwner(),
		});
		let stderr = '';
		child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		const pooler = new TransactionPooler(child, dir, port);
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
			throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${stderr}`);
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
