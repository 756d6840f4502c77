import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a TLS test server shows and what its tests present, made for one run. */
export interface Certificates {
	/** The CA that signed the server's certificate: its file (the server trusts it) and its PEM. */
	caFile: string;
	caPem: string;
	/** Another CA, which signed nothing this server shows (its key doubles as a key of no certificate). */
	otherCaPem: string;
	otherKeyPem: string;
	/** The certificate user's client certificate and key. */
	clientCertPem: string;
	clientKeyPem: string;
	/** The server's certificate (127.0.0.1 and localhost) and key files. */
	serverCert: string;
	serverKey: string;
	/** The user the client certificate is for, and an address of the server no certificate names. */
	certificateUser: string;
	unlistedHost: string;
}

const CERTIFICATE_USER = 'certificate_user';

/**
 * In `dir`: a throwaway CA; the server certificate it signs for 127.0.0.1 and localhost; a client
 * certificate it signs for the certificate user; and an unrelated second CA. P-256 keys, unencrypted,
 * valid two days (Debian's `openssl`).
 */
export function makeCertificates(dir: string): Certificates {
	const file = (name: string) => join(dir, name);
	// Arguments as words (the paths are a temporary folder's: no spaces), the subject as one argument.
	const openssl = (words: string, subject?: string) =>
		execFileSync('openssl', [...words.split(' '), ...(subject ? ['-subj', subject] : [])], {
			stdio: ['ignore', 'ignore', 'pipe'],
		});
	const newKey = (name: string) =>
		`-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ${file(`${name}.key`)}`;
	const newCa = (name: string, subject: string) =>
		openssl(
			`req -x509 ${newKey(name)} -days 2 -out ${file(`${name}.crt`)} -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign`,
			subject,
		);
	const signedByCa = (name: string, subject: string, extensions: string) => {
		openssl(`req ${newKey(name)} -out ${file(`${name}.csr`)}`, subject);
		writeFileSync(file(`${name}.ext`), extensions);
		openssl(
			`x509 -req -in ${file(`${name}.csr`)} -CA ${file('ca.crt')} -CAkey ${file('ca.key')} -CAcreateserial -days 2 -extfile ${file(`${name}.ext`)} -out ${file(`${name}.crt`)}`,
		);
	};
	newCa('ca', '/CN=Idempotency Test CA');
	newCa('other-ca', '/CN=Some Other CA');
	signedByCa(
		'server',
		'/CN=localhost',
		'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
	);
	signedByCa('client', `/CN=${CERTIFICATE_USER}`, 'extendedKeyUsage=clientAuth\n');
	chmodSync(file('server.key'), 0o600); // the server refuses a key file that others can read
	const read = (name: string) => readFileSync(file(name), 'utf8');
	return {
		caFile: file('ca.crt'),
		caPem: read('ca.crt'),
		otherCaPem: read('other-ca.crt'),
		otherKeyPem: read('other-ca.key'),
		clientCertPem: read('client.crt'),
		clientKeyPem: read('client.key'),
		serverCert: file('server.crt'),
		serverKey: file('server.key'),
		certificateUser: CERTIFICATE_USER,
		unlistedHost: '127.0.0.2',
	};
}
