/**
 * workflows/webhook-http-step-template.json in a real n8n: Idempotency Step guards an HTTP call to another
 * service, and n8n is killed with SIGKILL after the service made an event's effect and before Finish Step
 * recorded it (the service makes the effect of each aimed event's first call and holds its answer; n8n is
 * killed once every aimed call is held). n8n is started again and the workflows' own schedules (every 10 s
 * here, every minute as shipped) run the kept events from Postgres.
 *
 * Three copies of the template, each on a claim table of its own, take the same storm side by side:
 * - the service honours Idempotency-Key and Start Call's *Service Honours the Key* is on: the killed calls
 *   are made again with the same step key, the service answers them from memory: every event once;
 * - the service ignores keys and the option is off (as shipped): every killed event leaves on Uncertain and
 *   is parked as a dead letter for a person, never called again;
 * - the service ignores keys and the option is on (a misconfiguration): the killed events' effects happen
 *   twice, which is what the guard's default prevents, so the checks above can fail.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

import { IDEMPOTENCY_CREDENTIAL, SIGNING_CREDENTIAL } from '../../harness/n8n/credentials';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { webhookPathOf, type WorkflowJson } from '../../harness/n8n/workflows';
import { SideEffectService, type KeyHandling } from '../../harness/services/sideEffectService';
import { deliver } from '../../harness/webhooks/deliver';
import { stackForSuite } from '../../harness/stackForSuite';
import { templateVariant } from './fixtures/templateVariants';
import { makeDue, processingLeft } from '../support/inbox';
import { waitFor } from '../support/waitFor';

const TEMPLATE = 'webhook-http-step-template.json';
const PLAIN_PER_ARM = 12;
const AIMED_PER_ARM = 3;
const PLAIN_PER_ARM_INDEXES = Array.from({ length: PLAIN_PER_ARM }, (_, index) => index);
const SENDERS = 4;
const UNAVAILABLE_RETRIES = 30;
const credentials = {
	idempotencyWebhookSigningApi: SIGNING_CREDENTIAL,
	idempotencyPostgresApi: IDEMPOTENCY_CREDENTIAL,
};

interface Arm {
	name: string;
	table: string;
	service: KeyHandling;
	serviceHonoursKey: boolean;
}

const HONOURED: Arm = {
	name: 'honoured',
	table: 'processed_events',
	service: 'honours-key',
	serviceHonoursKey: true,
};
const GUARDED: Arm = {
	name: 'guarded',
	table: 'keyless_events',
	service: 'ignores-key',
	serviceHonoursKey: false,
};
const MISTRUSTED: Arm = {
	name: 'mistrusted',
	table: 'mistrusted_events',
	service: 'ignores-key',
	serviceHonoursKey: true,
};
const ARMS = [HONOURED, GUARDED, MISTRUSTED];

/** The template as shipped, on the arm's table, calling the arm's service, retrying every 10 s. */
function armWorkflow(arm: Arm, service: SideEffectService): WorkflowJson {
	const onTable = { parameters: { options: { table: arm.table } } };
	return templateVariant(TEMPLATE, {
		path: `http-step-${arm.name}`,
		credentials,
		nodes: {
			'Idempotency Claim': onTable,
			'Take Due Events': onTable,
			'Start Call': {
				parameters: {
					options: { table: arm.table, serviceHonoursKey: arm.serviceHonoursKey },
				},
			},
			'Call the Service (replace URL)': { parameters: { url: service.url(arm.service) } },
			'Record the Call': onTable,
			'Mark Key Completed': onTable,
			'Retry Later': onTable,
			'Park for a Person': onTable,
			'Every Minute (retries)': {
				parameters: { rule: { interval: [{ field: 'seconds', secondsInterval: 10 }] } },
			},
		},
	});
}

const tablesSql = ARMS.filter((arm) => arm.table !== 'processed_events')
	.map(
		({ table }) => `
	CREATE TABLE ${table} (LIKE processed_events INCLUDING ALL);
	CREATE TABLE ${table}_events (LIKE processed_events_events INCLUDING ALL);
	CREATE TABLE ${table}_steps (LIKE processed_events_steps INCLUDING ALL);`,
	)
	.join('\n');

let pool: Pool;
let n8n: N8nInstance | undefined;
let service: SideEffectService;
const workflows = new Map<Arm, WorkflowJson>();

stackForSuite(
	async () => {
		service = await SideEffectService.start();
		for (const arm of ARMS) workflows.set(arm, armWorkflow(arm, service));
		const all = [...workflows.values()];
		return {
			appDatabase: 'step_guard_e2e',
			n8nSchema: 'n8n_step_guard',
			workflows: all,
			publish: all.map((workflow) => workflow.id),
			appSql: tablesSql,
		};
	},
	(started) => ({ pool, n8n } = started),
);
afterAll(() => service?.close());

const newKey = () => `evt:${randomUUID()}`;
const bodyOf = (key: string) => JSON.stringify({ id: key.slice(4), type: 'order.paid' });

/**
 * One delivery, retried only while it is answered 503 (n8n's "Database is not ready!" when its database
 * ping times out on a loaded machine, or the template's own 503): nothing was claimed then, and a sender
 * retries. Its final status, or 0 when n8n died under it.
 */
async function deliverOnce(arm: Arm, key: string): Promise<number> {
	const url = n8n!.webhookUrl(webhookPathOf(workflows.get(arm)!));
	for (let attempt = 1; ; attempt++) {
		let status: number;
		try {
			status = (await deliver(url, bodyOf(key))).status;
		} catch {
			return 0;
		}
		if (status !== 503 || attempt === UNAVAILABLE_RETRIES) return status;
		await new Promise((resolve) => setTimeout(resolve, 1_000));
	}
}

/** The kept-event record of each key: parked as a dead letter or not, and its last error. */
async function keptEvents(
	arm: Arm,
	keys: string[],
): Promise<Record<string, { dead: boolean; lastError: string | null }>> {
	const { rows } = await pool.query<{ key: string; dead: boolean; last_error: string | null }>(
		`SELECT key, dead_at IS NOT NULL AS dead, last_error FROM ${arm.table}_events WHERE key = ANY($1)`,
		[keys],
	);
	return Object.fromEntries(
		rows.map((row) => [row.key, { dead: row.dead, lastError: row.last_error }]),
	);
}

/** Keys whose claim is completed (lease NULL). */
async function completed(arm: Arm, keys: string[]): Promise<string[]> {
	const { rows } = await pool.query<{ key: string }>(
		`SELECT key FROM ${arm.table} WHERE key = ANY($1) AND lease_until IS NULL ORDER BY key`,
		[keys],
	);
	return rows.map((row) => row.key);
}

/** The step marks left for these keys: started, and finished or not. */
async function stepMarks(arm: Arm, keys: string[]): Promise<Record<string, boolean>> {
	const { rows } = await pool.query<{ key: string; finished: boolean }>(
		`SELECT key, finished_at IS NOT NULL AS finished FROM ${arm.table}_steps WHERE key = ANY($1)`,
		[keys],
	);
	return Object.fromEntries(rows.map((row) => [row.key, row.finished]));
}

it(
	'n8n killed between the call and its record: a service that honours the key acts once per event; one that ignores keys leaves the killed events Uncertain, never called again',
	() =>
		explainedByN8nLog(n8n, async () => {
			const plain = new Map(
				ARMS.map((arm) => [arm, Array.from({ length: PLAIN_PER_ARM }, newKey)]),
			);
			const aimed = new Map(
				ARMS.map((arm) => [arm, Array.from({ length: AIMED_PER_ARM }, newKey)]),
			);
			const allAimed = [...aimed.values()].flat();
			service.holdFirstCalls(allAimed);

			// The storm: the aimed deliveries at once (each hangs in its call until n8n dies), the plain ones
			// beside them from SENDERS senders (more at once time out in n8n's own database pool on 2 cores).
			const dying = Promise.all(
				ARMS.flatMap((arm) => aimed.get(arm)!.map((key) => deliverOnce(arm, key))),
			);
			const queue = PLAIN_PER_ARM_INDEXES.flatMap((index) =>
				ARMS.map((arm) => ({ arm, key: plain.get(arm)![index] })),
			);
			const plainAnswers: number[] = [];
			await Promise.all(
				Array.from({ length: SENDERS }, async () => {
					for (let next = queue.shift(); next; next = queue.shift())
						plainAnswers.push(await deliverOnce(next.arm, next.key));
				}),
			);
			expect(plainAnswers.filter((status) => status !== 200)).toEqual([]);
			await waitFor(
				async () => service.heldCount === allAimed.length,
				120_000,
				'every aimed call held at the service',
			);
			await n8n!.kill();
			expect(await dying).toEqual(allAimed.map(() => 0));
			// The effects were made; nothing recorded them.
			for (const key of allAimed)
				expect({ key, effects: service.effectsOf(key) }).toEqual({ key, effects: 1 });

			await n8n!.start();
			for (const arm of ARMS) await makeDue(pool, arm.table);
			await waitFor(
				async () =>
					(await Promise.all(ARMS.map((arm) => processingLeft(pool, arm.table)))).every(
						(left) => left === 0,
					),
				180_000,
				'the kept events run by the schedules',
			);

			// Honoured: every event completed, its effect made once; each killed call made again with its key.
			const honouredKeys = [...plain.get(HONOURED)!, ...aimed.get(HONOURED)!];
			expect(await completed(HONOURED, honouredKeys)).toEqual([...honouredKeys].sort());
			for (const key of honouredKeys)
				expect({ key, effects: service.effectsOf(key) }).toEqual({ key, effects: 1 });
			for (const key of aimed.get(HONOURED)!) {
				const calls = service.callsOf(key);
				expect(calls.map((call) => call.effect)).toEqual([true, false]);
				expect(new Set(calls.map((call) => call.idempotencyKey)).size).toBe(1);
				expect(calls[0].idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
			}
			expect(await stepMarks(HONOURED, honouredKeys)).toEqual({});

			// Guarded (as shipped): the plain events completed once; each killed one parked on Uncertain, its
			// step still started and unfinished, the service never called again.
			const guardedPlain = plain.get(GUARDED)!;
			expect(await completed(GUARDED, guardedPlain)).toEqual([...guardedPlain].sort());
			for (const key of guardedPlain)
				expect({ key, calls: service.callsOf(key).length }).toEqual({ key, calls: 1 });
			const parked = await keptEvents(GUARDED, aimed.get(GUARDED)!);
			const marks = await stepMarks(GUARDED, aimed.get(GUARDED)!);
			for (const key of aimed.get(GUARDED)!) {
				expect({ key, calls: service.callsOf(key).length }).toEqual({ key, calls: 1 });
				expect({ key, dead: parked[key]?.dead, finished: marks[key] }).toEqual({
					key,
					dead: true,
					finished: false,
				});
				expect(parked[key].lastError).toMatch(
					/^uncertain: step "call service" \(step key [0-9a-f]{64}\)/,
				);
			}

			// Mistrusted: the option on for a service that ignores keys: each killed event's effect twice.
			for (const key of aimed.get(MISTRUSTED)!)
				expect({ key, effects: service.effectsOf(key) }).toEqual({ key, effects: 2 });
			for (const key of plain.get(MISTRUSTED)!)
				expect({ key, effects: service.effectsOf(key) }).toEqual({ key, effects: 1 });

			console.log(
				`step guard e2e: ${ARMS.length} × (${PLAIN_PER_ARM} plain + ${AIMED_PER_ARM} killed between call and record); ` +
					`honoured key: 0 doubled, 0 lost; keys ignored: ${AIMED_PER_ARM} of ${AIMED_PER_ARM} killed parked Uncertain, 0 called again; ` +
					`keys ignored with the option on: ${AIMED_PER_ARM} of ${AIMED_PER_ARM} killed doubled`,
			);
		}),
	10 * 60_000,
);
