import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { Client } from 'pg';

import { IdempotencyClaim } from '../../nodes/Idempotency/IdempotencyClaim.node';
import { poolFor } from '../../nodes/Idempotency/transport/poolRegistry';
import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import { uniqueTableName } from '../support/database';
import { connectionTest, executeContext, webhookItem } from '../../harness/node/executeContext';
import { OwnPostgres } from '../../harness/postgres/server';

/** A server of the test's own that takes TLS only, or (`off`) the same server with TLS off. */
type TlsPostgres = OwnPostgres & NonNullable<OwnPostgres['certificates']>;
async function startTlsPostgres(tls: 'only' | 'off'): Promise<TlsPostgres> {
	const started = await OwnPostgres.start({ tls });
	return Object.assign(started, started.certificates);
}

let server: TlsPostgres;
let plainServer: TlsPostgres;

beforeAll(async () => {
	[server, plainServer] = await Promise.all([startTlsPostgres('only'), startTlsPostgres('off')]);
});

afterAll(async () => {
	await Promise.all([server?.stop(), plainServer?.stop()]);
});

function credentials(
	overrides: Partial<PostgresCredentials> = {},
	on: TlsPostgres = server,
): PostgresCredentials {
	return {
		host: '127.0.0.1',
		port: on.port,
		database: on.database,
		user: on.user,
		password: on.password,
		ssl: 'require',
		maxConnections: 2,
		...overrides,
	};
}

const node = new IdempotencyClaim();

/** One delivery of event `id` through the Claim node; resolves to [New, Duplicate] outputs. */
async function claim(
	using: PostgresCredentials,
	table: string,
	id: string,
): Promise<INodeExecutionData[][]> {
	const context = executeContext([webhookItem(`{"id":"${id}"}`)], {
		parameters: { keySource: 'auto', claimMode: 'once', options: { table } },
		credentials: using,
	});
	return node.execute.call(context);
}

/** What the server holds, read over a verified TLS connection of the test's own. */
async function keysIn(table: string, on: TlsPostgres = server): Promise<string[] | null> {
	const client = new Client({
		...credentials({}, on),
		ssl: on === server ? { ca: server.caPem } : false,
	});
	await client.connect();
	try {
		const exists = await client.query('SELECT to_regclass($1) AS t', [table]);
		if (exists.rows[0].t === null) return null;
		return (await client.query(`SELECT key FROM ${table} ORDER BY key`)).rows.map(
			(row) => row.key as string,
		);
	} finally {
		await client.end();
	}
}

/** Whether the node's own pool talks TLS to the server, as the server sees it. */
async function poolUsesTls(using: PostgresCredentials): Promise<boolean> {
	const pool = await poolFor(using);
	const result = await pool.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
	return result.rows[0].ssl as boolean;
}

/**
 * The node's claim fails with `reason` and claims nothing; Test fails with the same reason, followed by the
 * driver's own words.
 */
async function expectNodeAndTestToFail(
	using: PostgresCredentials,
	reason: string,
	on: TlsPostgres = server,
): Promise<void> {
	const table = uniqueTableName('tls');
	await expect(claim(using, table, 'evt_refused')).rejects.toThrow(reason);
	const tested = await connectionTest(using);
	expect(tested.status).toBe('Error');
	expect(tested.message.startsWith(`${reason}: `)).toBe(true);
	expect(await keysIn(table, on)).toBeNull();
}

/** Claims event `id` and expects it to leave on New, as the only item there; resolves to the table. */
async function expectNew(
	using: PostgresCredentials,
	id: string,
	table = uniqueTableName('tls'),
): Promise<string> {
	const [created] = await claim(using, table, id);
	expect(created.map((item) => (item.json.idempotency as IDataObject).key)).toEqual([`evt:${id}`]);
	return table;
}

const CONNECTION_OK = { status: 'OK', message: 'Connection successful' };

describe('a PostgreSQL that accepts only TLS, with a certificate from a CA made for the test', () => {
	it('Require with the CA pasted: the claim writes its row over a verified TLS connection, and Test says OK', async () => {
		const using = credentials({ caCertificate: server.caPem });
		const table = await expectNew(using, 'evt_ca');
		expect(await keysIn(table)).toEqual(['evt:evt_ca']);
		expect(await poolUsesTls(using)).toBe(true);
		expect(await connectionTest(using)).toEqual(CONNECTION_OK);
	});

	it('the CA pasted into a single-line field (line breaks dropped), or JSON-escaped, still verifies', async () => {
		const flattened = server.caPem.replace(/\r?\n/g, '');
		const escaped = server.caPem.replace(/\r?\n/g, '\\n');
		expect(await connectionTest(credentials({ caCertificate: flattened }))).toEqual(CONNECTION_OK);
		expect(await connectionTest(credentials({ caCertificate: escaped }))).toEqual(CONNECTION_OK);
		await expectNew(credentials({ caCertificate: flattened }), 'evt_flat');
	});

	it('Require with Ignore SSL Issues: the claim goes through over TLS without checking the certificate', async () => {
		const using = credentials({ ignoreSslIssues: true });
		const table = await expectNew(using, 'evt_ignore');
		expect(await keysIn(table)).toEqual(['evt:evt_ignore']);
		expect(await poolUsesTls(using)).toBe(true);
		expect((await connectionTest(using)).status).toBe('OK');
	});

	it('Require with neither CA nor Ignore SSL Issues: node and Test both say no trusted CA signed the certificate', async () => {
		await expectNodeAndTestToFail(
			credentials(),
			`TLS problem connecting to 127.0.0.1:${server.port}: the server's certificate is not signed by a CA this machine trusts: paste the CA that signed it into CA Certificate, or turn on Ignore SSL Issues`,
		);
	});

	it('a CA that did not sign the server certificate: node and Test both name the CA Certificate as the problem', async () => {
		await expectNodeAndTestToFail(
			credentials({ caCertificate: server.otherCaPem }),
			`TLS problem connecting to 127.0.0.1:${server.port}: the server's certificate is not signed by the CA Certificate in this credential`,
		);
	});

	it('text that is no usable certificate is refused before connecting, naming the field and the problem', async () => {
		const [, body] = /-----BEGIN CERTIFICATE-----\n([\s\S]*)-----END CERTIFICATE-----/.exec(
			server.caPem,
		)!;
		const damaged = `-----BEGIN CERTIFICATE-----\n${body.slice(0, 40)}\n-----END CERTIFICATE-----`;
		const privateKey =
			'-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----';
		expect(await connectionTest(credentials({ caCertificate: 'my-ca.pem' }))).toEqual({
			status: 'Error',
			message:
				'CA Certificate is not PEM text: paste it from its -----BEGIN … line to its -----END … line',
		});
		expect(await connectionTest(credentials({ caCertificate: damaged }))).toEqual({
			status: 'Error',
			message: 'CA Certificate: its content is damaged (cannot be read)',
		});
		expect(
			await connectionTest(credentials({ caCertificate: `${server.caPem}${damaged}` })),
		).toEqual({
			status: 'Error',
			message: 'CA Certificate: block 2 of 2 is damaged (cannot be read)',
		});
		expect((await connectionTest(credentials({ caCertificate: privateKey }))).message).toBe(
			'CA Certificate holds a private key: paste the CA certificate (-----BEGIN CERTIFICATE-----) instead',
		);
		await expect(
			claim(credentials({ caCertificate: 'my-ca.pem' }), uniqueTableName('tls'), 'evt_bad_ca'),
		).rejects.toThrow(/^CA Certificate is not PEM text/);
	});

	it('a host name the certificate does not list fails with the CA pasted, and works with Ignore SSL Issues', async () => {
		const wrongHost = credentials({ host: server.unlistedHost, caCertificate: server.caPem });
		const tested = await connectionTest(wrongHost);
		expect(tested.status).toBe('Error');
		expect(tested.message).toMatch(
			`TLS problem connecting to ${server.unlistedHost}:${server.port}: the server's certificate is not issued for host "${server.unlistedHost}"`,
		);
		await expect(claim(wrongHost, uniqueTableName('tls'), 'evt_host')).rejects.toThrow(
			/is not issued for host "127\.0\.0\.2"/,
		);
		expect(
			(await connectionTest(credentials({ host: server.unlistedHost, ignoreSslIssues: true })))
				.status,
		).toBe('OK');
	});

	it('Allow: plain TCP is refused, so node and Test both fall back to TLS, and both succeed', async () => {
		const using = credentials({ ssl: 'allow', caCertificate: server.caPem });
		expect(await connectionTest(using)).toEqual(CONNECTION_OK);
		await expectNew(using, 'evt_allow');
		expect(await poolUsesTls(using)).toBe(true);
		// After the fallback, the certificate is checked as under Require.
		const unverified = await connectionTest(
			credentials({ ssl: 'allow', caCertificate: server.otherCaPem }),
		);
		expect(unverified.message).toMatch(
			/the server's certificate is not signed by the CA Certificate in this credential/,
		);
	});

	it('Disable: node and Test both say the server accepts only TLS and which setting to change', async () => {
		await expectNodeAndTestToFail(
			credentials({ ssl: 'disable' }),
			`TLS problem connecting to 127.0.0.1:${server.port}: the server accepts only TLS connections from here: set SSL to Require or Allow`,
		);
	});
});

describe('a user the server authenticates by client certificate', () => {
	const asCertificateUser = (overrides: Partial<PostgresCredentials> = {}) =>
		credentials({
			user: server.certificateUser,
			password: '',
			caCertificate: server.caPem,
			...overrides,
		});

	it('with Client Certificate and Client Private Key (pasted on one line), the claim goes through and Test says OK', async () => {
		const using = asCertificateUser({
			clientCertificate: server.clientCertPem.replace(/\n/g, ''),
			clientPrivateKey: server.clientKeyPem.replace(/\n/g, ''),
		});
		expect(await connectionTest(using)).toEqual(CONNECTION_OK);
		const table = await expectNew(using, 'evt_cert');
		expect(await keysIn(table)).toEqual(['evt:evt_cert']);
	});

	it('without them, node and Test both say the server asks for a client certificate', async () => {
		await expectNodeAndTestToFail(
			asCertificateUser(),
			`TLS problem connecting to 127.0.0.1:${server.port}: the server asks user "${server.certificateUser}" for a client certificate: fill in Client Certificate and Client Private Key`,
		);
	});

	it('a half-filled pair, a key of another certificate, or an encrypted key is refused before connecting', async () => {
		const messageFor = async (overrides: Partial<PostgresCredentials>) =>
			(await connectionTest(asCertificateUser(overrides))).message;
		expect(await messageFor({ clientCertificate: server.clientCertPem })).toBe(
			'Client Certificate is set but Client Private Key is empty: paste both',
		);
		expect(await messageFor({ clientPrivateKey: server.clientKeyPem })).toBe(
			'Client Private Key is set but Client Certificate is empty: paste both',
		);
		expect(
			await messageFor({
				clientCertificate: server.clientCertPem,
				clientPrivateKey: server.otherKeyPem,
			}),
		).toBe('Client Private Key does not belong to Client Certificate');
		expect(
			await messageFor({
				clientCertificate: server.clientCertPem,
				clientPrivateKey:
					'-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----',
			}),
		).toBe('Client Private Key is encrypted: paste it without a passphrase');
	});
});

describe('a PostgreSQL with TLS off', () => {
	it('Require: node and Test both say the server does not accept TLS and which setting to change', async () => {
		await expectNodeAndTestToFail(
			credentials({ ssl: 'require', caCertificate: plainServer.caPem }, plainServer),
			`TLS problem connecting to 127.0.0.1:${plainServer.port}: the server does not accept TLS: set SSL to Allow or Disable`,
			plainServer,
		);
	});

	it('Allow: node and Test both use plain TCP, and the claim goes through', async () => {
		const using = credentials({ ssl: 'allow', caCertificate: plainServer.caPem }, plainServer);
		expect(await connectionTest(using)).toEqual(CONNECTION_OK);
		const table = await expectNew(using, 'evt_allow_plain');
		expect(await keysIn(table, plainServer)).toEqual(['evt:evt_allow_plain']);
		expect(await poolUsesTls(using)).toBe(false);
	});
});

describe("the CA Certificate is part of a pool's identity", () => {
	it('a pool made without the CA (whose connections fail verification) is not reused once the CA is given', async () => {
		const table = uniqueTableName('tls');
		await expect(claim(credentials(), table, 'evt_before')).rejects.toThrow(
			/not signed by a CA this machine trusts/,
		);
		const withCa = credentials({ caCertificate: server.caPem });
		await expectNew(withCa, 'evt_after', table);
		// The pool this credential gets now is a new one: the server sees it verified over TLS.
		expect(await poolUsesTls(withCa)).toBe(true);
	});

	it('a pool made with the CA is not reused for the same credential without it, nor for another CA', async () => {
		const table = await expectNew(credentials({ caCertificate: server.caPem }), 'evt_1');
		await expect(claim(credentials(), table, 'evt_2')).rejects.toThrow(
			/not signed by a CA this machine trusts/,
		);
		await expect(
			claim(credentials({ caCertificate: server.otherCaPem }), table, 'evt_3'),
		).rejects.toThrow(/not signed by the CA Certificate in this credential/);
		expect(await keysIn(table)).toEqual(['evt:evt_1']);
	});
});
