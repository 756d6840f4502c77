import { Pool } from 'pg';

import { OwnPostgres, type OwnPostgresOptions } from '../postgres/server';

/** A Postgres server of a fault suite's own, which its faults may stop, fill or restart. */
export interface FaultServer {
	server: OwnPostgres;
	/** A small pool on it, for the test's own statements; business_log (event_key) is made there. */
	admin: Pool;
	/** Where the node's messages say the server is. */
	where: string;
}

/** A server of the suite's own (`options`: a small disk…), started before its tests and stopped after. */
export function faultServerForSuite(options: OwnPostgresOptions = {}): FaultServer {
	const suite = {} as FaultServer;
	beforeAll(async () => {
		suite.server = await OwnPostgres.start(options);
		suite.where = `127.0.0.1:${suite.server.port}`;
		suite.admin = new Pool({ connectionString: suite.server.url, max: 2 });
		// An idle connection of this pool may be cut (57P01) while the server is stopped or a session ended:
		// the pool replaces it, and an unhandled 'error' event would end the test run.
		suite.admin.on('error', () => undefined);
		await suite.admin.query('CREATE TABLE business_log (event_key text NOT NULL)');
	}, 60_000);
	afterAll(async () => {
		await suite.admin?.end();
		await suite.server?.stop();
	});
	return suite;
}
