/**
 * A switch set by an expression reaches the node as text ("true" from {{ $env.KEEP_EVENTS }}): it is read
 * as written, and text that is no switch is refused naming the switch before anything is claimed. Before,
 * Keep Event's "true" kept nothing (a failed delivery of a sender that never retries was gone) and Create
 * Table If Missing's "false" created the table.
 */
import { testPool, uniqueTableName } from '../support/database';
import { claim, delivery, inboxTables, keysOf, retryLater, takeDue } from '../support/inboxNodes';

const admin = testPool(2);
afterAll(() => admin.end());

const { eventRows } = inboxTables(admin);
const tableExists = async (table: string) =>
	(await admin.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [table]))
		.rows[0].found;

describe('switches set by an expression', () => {
	it('Keep Event "true" keeps the event, and a failed run of it is due again', async () => {
		const table = uniqueTableName('switch_keep');
		const [[held]] = await claim([delivery('evt_env_keep')], table, { keepEvent: 'true' });
		expect((await eventRows(table)).map((row) => row.key)).toEqual(['evt:evt_env_keep']);

		await retryLater([held], table, { backoff: { baseSeconds: 0, jitter: 0 } });
		const [taken] = await takeDue(table);
		expect(keysOf(taken)).toEqual(['evt:evt_env_keep']);
	});

	it('Keep Event "false" keeps none', async () => {
		const table = uniqueTableName('switch_nokeep');
		await claim([delivery('evt_env_nokeep')], table, { keepEvent: ' FALSE ' });
		expect(await tableExists(`${table}_events`)).toBe(false);
	});

	it('Keep Event "yes" is refused naming it, with nothing claimed', async () => {
		const table = uniqueTableName('switch_yes');
		const outputs = await claim([delivery('evt_env_yes')], table, { keepEvent: 'yes' });
		expect(outputs.flat().map((item) => item.json)).toEqual([
			{ error: 'configuration', message: 'Keep Event must be true or false, got "yes"' },
		]);
		expect(await tableExists(table)).toBe(false);
	});

	it('Create Table If Missing "false" creates no table', async () => {
		const table = uniqueTableName('switch_nocreate');
		const outputs = await claim([delivery('evt_env_nocreate')], table, {
			options: { table, createTable: 'false' },
		});
		expect(outputs.flat().map((item) => item.json)).toEqual([
			{ error: 'database', message: expect.stringContaining(`${table} does not exist`) },
		]);
		expect(await tableExists(table)).toBe(false);
	});
});
