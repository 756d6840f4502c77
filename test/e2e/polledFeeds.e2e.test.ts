/**
 * The polled-feed templates in a real n8n 2.x, against a feed and an API this test serves on loopback
 * and changes between polls. Polls are started on demand the way the editor's "Execute workflow" does
 * (the owner signs in; POST /rest/workflows/:id/run from the templates' own "Run Now" trigger), two or
 * eight at the same moment where the test says so (the feed server answers them together). The
 * templates run as shipped but for their URL. Assertions read the business table (one row per item the
 * business step ran for), the claim table and n8n's own execution records.
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';

import { markValue } from '../../nodes/Idempotency/watermark/markValue';
import { rowsOf } from '../support/claimTableSql';
import { FeedServer, type FeedItem } from '../../harness/feeds/feedServer';
import { stackForSuite } from '../../harness/stackForSuite';
import type { Execution, N8nExecutions } from '../../harness/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../../harness/n8n/instance';
import { N8nManualRuns } from '../../harness/n8n/manualRuns';
import { ownerEnv } from '../../harness/n8n/owner';
import { ensureRuntime } from '../../harness/n8n/runtime';
import {
	loadShippedWorkflow,
	withNodeParameters,
	type WorkflowJson,
} from '../../harness/n8n/workflows';
import { loadFixtureWorkflow } from '../support/fixtures';

const N8N_SCHEMA = 'n8n_e2e';
const RUN_NOW = 'Run Now';
const BUSINESS_STEP = 'Insert into business_log (example)';
const CLAIM = '.idempotencyClaim';

const rssTemplate = loadShippedWorkflow('rss-feed-new-items.json');
const apiTemplate = loadShippedWorkflow('api-new-records.json');
// The API template with its claim switched to a watermark, as a user would switch it.
const higherWorkflow = {
	...loadShippedWorkflow('api-new-records.json'),
	name: 'e2e: Value Is Higher',
};
const laterWorkflow = { ...loadShippedWorkflow('api-new-records.json'), name: 'e2e: Date Later' };
const clearWorkflow = loadFixtureWorkflow('clear-history.json');

let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;
let feed: FeedServer;
let runs: N8nManualRuns;
const workflows: Record<string, WorkflowJson> = {};

stackForSuite(
	async () => {
		feed = await FeedServer.start();
		const records = { url: feed.url('/records') };
		const rss = withNodeParameters(rssTemplate, '.rssFeedRead', { url: feed.url('/feed.xml') });
		Object.assign(workflows, {
			rss,
			api: withNodeParameters(apiTemplate, '.httpRequest', records),
			higher: watermarkVariant(higherWorkflow, 'higher', '={{ $json.seq }}', records),
			later: watermarkVariant(laterWorkflow, 'later', '={{ $json.createdAt }}', records),
			clear: withNodeParameters(clearWorkflow, '.idempotencyKey', { clearScope: scopeOf(rss) }),
		});
		return {
			appDatabase: 'polled_e2e',
			n8nSchema: N8N_SCHEMA,
			workflows: Object.values(workflows),
			// Nothing is published: the schedules stay quiet and every poll is one the test starts.
			publish: [],
			env: ownerEnv(await ensureRuntime()),
		};
	},
	(started) => ({ pool, n8n, executions } = started),
);

beforeAll(async () => {
	runs = await N8nManualRuns.signIn(n8n!.baseUrl);
});
afterAll(() => feed?.close());

const tag = randomBytes(3).toString('hex');
const base = Date.parse('2026-03-01T00:00:00Z');
const item = (seq: number, noGuid = false): FeedItem => ({
	id: `it_${tag}_${seq}`,
	seq,
	published: new Date(base + seq * 60_000),
	noGuid,
});

/** `count` polls of the workflow started at the same moment; resolves with their finished executions. */
async function poll(workflow: WorkflowJson, count = 1): Promise<Execution[]> {
	const since = await executions.lastId();
	if (count > 1) feed.together(count);
	await Promise.all(Array.from({ length: count }, () => runs.run(workflow.id, RUN_NOW)));
	return executions.waitForFinished(workflow.id, since, count, 60_000);
}

/**
 * The API template switched to a watermark; its example business step then records each passed value
 * (a watermark keeps no key per item) under the scope, so the test can count passes per value.
 */
function watermarkVariant(
	workflow: WorkflowJson,
	keepItemsWhere: 'higher' | 'later',
	dedupeValue: string,
	records: { url: string },
): WorkflowJson {
	const switched = withNodeParameters(
		withNodeParameters(workflow, '.httpRequest', records),
		CLAIM,
		{ keepItemsWhere, dedupeValue },
	);
	return withNodeParameters(switched, '.postgres', {
		options: {
			queryReplacement:
				"={{ [ $json.idempotency.scope + ':' + $json.idempotency.value, 'api.record' ] }}",
		},
	});
}

const claimNodeOf = (workflow: WorkflowJson) => workflow.nodes.find((n) => n.type.endsWith(CLAIM))!;
/** The claim node's default scope: Remove Duplicates' Scope Node. */
const scopeOf = (workflow: WorkflowJson) => `${workflow.id}/${claimNodeOf(workflow).id}`;

/** business_log rows per event_key under the scope. */
async function businessRows(scope: string): Promise<Map<string, number>> {
	const { rows } = await pool.query<{ event_key: string; n: number }>(
		'SELECT event_key, count(*)::int AS n FROM business_log WHERE starts_with(event_key, $1) GROUP BY event_key',
		[`${scope}:`],
	);
	return new Map(rows.map((row) => [row.event_key, row.n]));
}

/**
 * Twenty polls, the feed changing between them: new items at the top, old ones dropping off the end,
 * the order shuffled, an item that fell off coming back, one item without a guid. Two rounds poll twice
 * at the same moment.
 */
function feedRounds(): Array<{ items: FeedItem[]; polls: number }> {
	const rounds: Array<{ items: FeedItem[]; polls: number }> = [];
	let newest = 8;
	for (let round = 0; round < 18; round++) {
		newest += round % 3;
		const window = Array.from({ length: 10 }, (_, i) => newest - i).filter((seq) => seq > 0);
		const items = window.map((seq) => item(seq, seq === 11));
		if (round % 5 === 4) items.reverse();
		if (round === 9) items.push(item(1)); // fell off long ago, comes back
		rounds.push({ items, polls: round === 4 || round === 12 ? 2 : 1 });
	}
	return rounds;
}

describe.each([
	{
		label: 'RSS feed template (Schedule + RSS Read)',
		key: 'rss',
		valueOf: (it: FeedItem) => (it.noGuid ? feed.linkOf(it) : it.id),
	},
	{
		label: 'API records template (Schedule + HTTP Request)',
		key: 'api',
		valueOf: (it: FeedItem) => it.id,
	},
])('$label', ({ key, valueOf }) => {
	it('20 polls with changing items, two of them at the same moment: each item passes exactly once', () =>
		explainedByN8nLog(n8n, async () => {
			const workflow = workflows[key];
			const scope = scopeOf(workflow);
			const seen = new Map<string, FeedItem>();
			let polls = 0;
			const startedAt = feed.served.length;
			for (const { items, polls: count } of feedRounds()) {
				feed.setItems(items);
				const newInRound = items.filter((it) => !seen.has(it.id));
				const finished = await poll(workflow, count);
				polls += count;
				expect(finished.map((run) => run.status)).toEqual(Array(count).fill('success'));
				const ranBusinessStep = finished.filter((run) => run.nodesRun.includes(BUSINESS_STEP));
				expect(ranBusinessStep).toHaveLength(newInRound.length > 0 ? 1 : 0);
				for (const it of items) seen.set(it.id, it);
			}
			expect(polls).toBe(20);
			// Both polls of a double round were handed the same feed.
			expect(feed.served.length - startedAt).toBe(20);

			const rows = await businessRows(scope);
			const expected = new Map([...seen.values()].map((it) => [`${scope}:evt:${valueOf(it)}`, 1]));
			expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(expected));
			// Count Repeat Deliveries is off for polled items: no repeat wrote its row (rowsOf shows a
			// compact row never repeated as deliveries 1, last_seen = first_seen).
			const claims = (await rowsOf(pool, 'processed_events')).filter((row) =>
				(row.key as string).startsWith(`${scope}:`),
			);
			expect({
				n: claims.length,
				d: Math.max(...claims.map((row) => row.deliveries as number)),
				untouched: claims.every(
					(row) => (row.last_seen as Date).getTime() === (row.first_seen as Date).getTime(),
				),
			}).toEqual({ n: seen.size, d: 1, untouched: true });
		}));

	it("a failing business step releases its items' keys, so the next poll passes them again", () =>
		explainedByN8nLog(n8n, async () => {
			const workflow = workflows[key];
			const scope = scopeOf(workflow);
			const fresh = (name: string): FeedItem => ({ ...item(9000), id: `${name}_${tag}_${key}` });
			const [good, bad] = [fresh('good'), fresh('bad')];
			const keyOf = (it: FeedItem) => `${scope}:evt:${valueOf(it)}`;
			feed.setItems([bad, good, ...feedRounds().at(-1)!.items]);
			// The example business step fails for the one item, the template itself unchanged.
			await pool.query(
				`ALTER TABLE business_log ADD CONSTRAINT e2e_polled_reject CHECK (event_key <> '${keyOf(bad)}') NOT VALID`,
			);
			try {
				const since = await executions.lastId();
				const [failed] = await poll(workflow);
				expect(await executions.failures(workflow.id, since)).toEqual([]);
				expect(failed.status).toBe('success');
				expect(failed.nodesRun).toContain('Release Key');
				const { rows } = await pool.query('SELECT key FROM processed_events WHERE key = ANY($1)', [
					[keyOf(bad)],
				]);
				expect(rows).toEqual([]);
			} finally {
				await pool.query('ALTER TABLE business_log DROP CONSTRAINT IF EXISTS e2e_polled_reject');
			}
			const [retried] = await poll(workflow);
			expect(retried.nodesRun).toContain(BUSINESS_STEP);
			const rows = await businessRows(scope);
			expect([rows.get(keyOf(bad)), rows.get(keyOf(good))]).toEqual([1, 1]);
			const [after] = await poll(workflow);
			expect(after.nodesRun).not.toContain(BUSINESS_STEP);
		}));
});

describe('Clear Deduplication History in real n8n', () => {
	it('empties one scope only: the next poll passes its items again, the other scope stays', () =>
		explainedByN8nLog(n8n, async () => {
			const rssScope = scopeOf(workflows.rss);
			const apiScope = scopeOf(workflows.api);
			const apiKeysBefore = (await businessRows(apiScope)).size;
			expect(apiKeysBefore).toBeGreaterThan(0);
			const [cleared] = await poll(workflows.clear);
			expect(cleared.status).toBe('success');
			const left = async (scope: string) =>
				(
					await pool.query(
						'SELECT count(*)::int AS n FROM processed_events WHERE starts_with(key, $1)',
						[`${scope}:`],
					)
				).rows[0].n;
			expect(await left(rssScope)).toBe(0);
			expect(await left(apiScope)).toBe(apiKeysBefore);

			const current = feedRounds().at(-1)!.items;
			feed.setItems(current);
			const [again] = await poll(workflows.rss);
			expect(again.nodesRun).toContain(BUSINESS_STEP);
			expect(await left(rssScope)).toBe(current.length);
			const [api] = await poll(workflows.api);
			expect(api.nodesRun).not.toContain(BUSINESS_STEP);
		}));
});

describe.each([
	{ mode: 'Value Is Higher than Any Previous Value', key: 'higher', kind: 'number' as const },
	{ mode: 'Value Is a Date Later than Any Previous Date', key: 'later', kind: 'date' as const },
])('$mode in real n8n', ({ key, kind }) => {
	const valueOf = (it: FeedItem) =>
		markValue(kind === 'number' ? it.seq : it.published.toISOString(), kind);

	it('8 executions at the same moment, 5 rounds of new items: each value passes once', () =>
		explainedByN8nLog(n8n, async () => {
			const workflow = workflows[key];
			const scope = scopeOf(workflow);
			const served = new Map<string, FeedItem>();
			let newest = 1000;
			for (let round = 0; round < 5; round++) {
				newest += 6;
				const items = Array.from({ length: 12 }, (_, i) => item(newest - i));
				feed.setItems(items);
				const finished = await poll(workflow, 8);
				expect(finished.map((run) => run.status)).toEqual(Array(8).fill('success'));
				// All eight were handed the same items: the first to move the mark passes the new ones.
				expect(finished.filter((run) => run.nodesRun.includes(BUSINESS_STEP))).toHaveLength(1);
				for (const it of items) served.set(valueOf(it), it);
			}
			const rows = await businessRows(scope);
			expect(Object.fromEntries(rows)).toEqual(
				Object.fromEntries([...served.keys()].map((value) => [`${scope}:${value}`, 1])),
			);
			const mark = await pool.query(
				'SELECT kind, mark FROM processed_events_watermarks WHERE scope = $1',
				[scope],
			);
			expect(mark.rows).toEqual([{ kind, mark: valueOf(item(newest)) }]);
		}));
});
