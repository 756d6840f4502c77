import { withClient } from '../../harness/postgres/connections';
import { testCredentials, testDatabaseUrl, uniqueTableName } from '../support/database';
import { connectionTest } from '../../harness/node/executeContext';

describe('credential connection test', () => {
	it('reports OK for a working server', async () => {
		expect(await connectionTest(testCredentials())).toEqual({
			status: 'OK',
			message: 'Connection successful',
		});
	});

	it('names a refused connection', async () => {
		const result = await connectionTest(testCredentials({ port: 1 }));
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/^Connection refused at 127\.0\.0\.1:1/);
	});

	it('names an unknown database', async () => {
		const result = await connectionTest(testCredentials({ database: 'no_such_db_here' }));
		expect(result.message).toMatch(/^Database "no_such_db_here" does not exist/);
	});

	it('names a failed login (a role that may not log in is refused on every server, trust auth included)', async () => {
		const role = uniqueTableName('nologin');
		await withClient(testDatabaseUrl(), (client) => client.query(`CREATE ROLE ${role} NOLOGIN`));
		const result = await connectionTest(testCredentials({ user: role, password: 'x' }));
		expect(result.message).toMatch(new RegExp(`^Authentication failed for user "${role}"`));
	});

	it('names a TLS problem when TLS is required of a server without it', async () => {
		const result = await connectionTest(testCredentials({ ssl: 'require' }));
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/TLS problem connecting to 127\.0\.0\.1/);
	});
});
