// Idempotency Burst in a real n8n of its own (one process, the package installed from `npm pack`), beside
// the debounce n8n's forum answers give (Webhook → Redis push → Wait → Redis read → "still the last
// message?" → Redis delete → work) in the same n8n: the same conversations sent to each in turn (chats of
// one or two senders at once, gaps inside the quiet period, pauses past it or about as long as it). For the
// burst template: how soon after a burst's quiet period ended its work ran (the work's INSERT, database
// time). For both: messages lost, messages the work got twice, bursts split against the rules.
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';

import type { Pool } from 'pg';

import {
	BURST_RUNS_SQL,
	burstWorkflow,
	redisCredential,
	redisDebounceWorkflow,
} from '../../harness/n8n/burstWorkflows';
import { webhookPathOf } from '../../harness/n8n/workflows';
import { startStack } from '../../harness/stack';
import {
	BURST_SIZES,
	burstFindings,
	planConversations,
	runSummary,
	sendConversations,
	SMALL_BURST_SIZES,
	waitForBurstRuns,
	type Conversation,
} from '../../harness/webhooks/chatConversations';
import type { Benchmark } from '../lib/benchmark';
import { formatMs, summarize } from '../lib/stats';

const QUIET_SECONDS = 1;
const RULES = { quietMs: QUIET_SECONDS * 1000, maxItems: 20, maxWaitMs: 10_000 };
const TARGET_LATE_MS = 250;

export const title = '7b. Idempotency Burst in real n8n, beside a Wait node + Redis debounce';
export const run: Benchmark = async ({ url, quick, log, check }) => {
	if (!(await redisAnswers())) return { skipped: 'no Redis answers at 127.0.0.1:6379' };
	const prefix = `bench-debounce-${randomBytes(4).toString('hex')}`;
	const burst = burstWorkflow({
		path: 'bench-chat-burst',
		quietSeconds: QUIET_SECONDS,
		maxWaitSeconds: RULES.maxWaitMs / 1000,
		maxItems: RULES.maxItems,
		leaseSeconds: 60,
	});
	const redis = redisDebounceWorkflow('bench-redis-debounce', QUIET_SECONDS, prefix);
	const stack = await startStack({
		postgresUrl: url,
		appDatabase: 'bench_bursts_n8n',
		n8nSchema: 'n8n_bench_bursts',
		appSql: BURST_RUNS_SQL,
		workflows: [burst, redis],
		publish: [burst.id, redis.id],
		extraCredentials: [redisCredential()],
		log,
	});
	try {
		const conversations = planConversations({
			conversations: quick ? 10 : 50,
			quietMs: RULES.quietMs,
			seed: 71,
			sizes: quick ? SMALL_BURST_SIZES : BURST_SIZES,
		});
		// The chats start over a minute (10 s quick): one n8n process on a busy 2-core machine answers 10 to
		// 15 messages a second, and both workflows get the same load below that.
		const send = (path: string) =>
			sendConversations(stack.n8n.webhookUrl(path), conversations, {
				quietMs: RULES.quietMs,
				seed: 71,
				spreadMs: quick ? 10_000 : 60_000,
			});

		let started = Date.now();
		const sentToBursts = await send(webhookPathOf(burst));
		const runs = await waitForBurstRuns(stack.pool, sentToBursts.length, 120_000);
		const ours = burstFindings(conversations, runs, RULES);
		log(`Idempotency Burst: ${runSummary(sentToBursts, ours, Date.now() - started)}`);
		check(
			ours.lost.length === 0 && ours.duplicated.length === 0,
			`Idempotency Burst in n8n: ${ours.lost.length} messages lost, ${ours.duplicated.length} in two bursts`,
		);
		const late = summarize(
			runs.filter((run) => run.endedBy === 'quiet').map((run) => run.ranAt - run.endedAt),
		);

		started = Date.now();
		const sentToRedis = await send(webhookPathOf(redis));
		const theirs = await redisFindings(stack.pool, conversations);
		log(
			`Redis debounce: ${sentToRedis.length} messages in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
				`${theirs.runs} work runs, ${theirs.lost} messages lost, ${theirs.twice} twice, ${theirs.runsWithRepeats} runs repeating a message`,
		);
		await clearRedis(prefix);

		const rows = [
			{
				measure: `burst template: its work ran after the burst's quiet period ended, ${runs.length} bursts (median; p95)`,
				value: `${formatMs(late.p50)}; ${formatMs(late.p95)}`,
				target: `≤ ${TARGET_LATE_MS} ms (median)`,
				met: late.p50 <= TARGET_LATE_MS,
			},
			{
				measure: `${ours.messages} messages, ${conversations.length} chats: lost / reached the work twice / bursts against the rules — Idempotency Burst`,
				value: `${ours.lost.length} / ${ours.duplicated.length} / ${ours.ruleBreaks.length}`,
				target: '0 / 0 / 0 (asserted)',
				met: ours.lost.length + ours.duplicated.length + ours.ruleBreaks.length === 0,
			},
			{
				measure: `the same messages through Wait + Redis (the forum recipe): lost / reached the work twice / work runs that repeated a message`,
				value: `${theirs.lost} / ${theirs.twice} / ${theirs.runsWithRepeats}`,
				target: 'reported',
			},
		];
		return {
			rows,
			details: [
				`Both workflows in one n8n 2.x process on the benchmark Postgres (n8n's data in its own database there), Redis at 127.0.0.1:6379. ` +
					`Quiet period ${QUIET_SECONDS} s for both; Idempotency Burst with Max Wait ${RULES.maxWaitMs / 1000} s and Max Items ${RULES.maxItems}. ` +
					`${conversations.length} chats (every second one with two senders typing at once), two bursts each, started over ${quick ? 10 : 60} s, sent to one workflow and then the other.`,
				`Idempotency Burst: ${runSummary(sentToBursts, ours, 0).replace(/ in 0\.0 s/, '')}. Its work ran ${formatMs(late.p50)} (median), ` +
					`${formatMs(late.p95)} (p95), ${formatMs(late.max)} (max) after the quiet period's end (database times: the end Collect recorded, the work's INSERT).`,
				`Wait + Redis: ${theirs.runs} work runs for ${theirs.messages} messages; ${theirs.lost} messages reached no work run ` +
					`(a message pushed between one execution's read and its delete is deleted unread, or the list was cleared under it), ` +
					`${theirs.twice} reached two (a message read by an execution whose list another execution had not yet cleared). ` +
					'Nothing in the recipe holds a lost message anywhere: Redis has forgotten it.',
			].join('\n\n'),
		};
	} finally {
		await stack.close();
	}
};

interface RedisFindings {
	messages: number;
	runs: number;
	lost: number;
	twice: number;
	runsWithRepeats: number;
}

/** The recipe's work runs once the last Wait has ended and no run has come for a few seconds. */
async function redisFindings(db: Pool, conversations: Conversation[]): Promise<RedisFindings> {
	let count = -1;
	for (;;) {
		await new Promise((resolve) => setTimeout(resolve, 3 * RULES.quietMs));
		const { rows } = await db.query('SELECT count(*)::int AS n FROM redis_runs');
		if (rows[0].n === count) break;
		count = rows[0].n;
	}
	const { rows } = await db.query<{ texts: string }>('SELECT texts FROM redis_runs');
	const seen = new Map<string, number>();
	let runsWithRepeats = 0;
	for (const { texts } of rows) {
		let repeats = false;
		for (const text of texts === '' ? [] : texts.split('\n')) {
			seen.set(text, (seen.get(text) ?? 0) + 1);
			if (seen.get(text)! > 1) repeats = true;
		}
		if (repeats) runsWithRepeats++;
	}
	const planned = conversations.flatMap((c) => c.bursts.flatMap((b) => b.senders.flat()));
	return {
		messages: planned.length,
		runs: rows.length,
		lost: planned.filter((message) => !seen.has(message.text)).length,
		twice: [...seen.values()].filter((times) => times > 1).length,
		runsWithRepeats,
	};
}

function redisAnswers(): Promise<boolean> {
	return redisCommand('PING').then(
		(answer) => answer.startsWith('+PONG'),
		() => false,
	);
}

/** Deletes this run's buffers (none should be left; a lost message's list may be). */
async function clearRedis(prefix: string): Promise<void> {
	const keys = await redisCommand(`KEYS ${prefix}:*`).catch(() => '');
	for (const key of keys.split('\r\n').filter((line) => line.startsWith(prefix)))
		await redisCommand(`DEL ${key}`).catch(() => undefined);
}

/** One inline Redis command (names without spaces), its raw answer. */
function redisCommand(command: string): Promise<string> {
	return new Promise((resolve, reject) => {
		const socket = new Socket();
		let answer = '';
		socket.setTimeout(2000, () => socket.destroy(new Error('Redis did not answer')));
		socket.once('error', reject);
		socket.connect(6379, '127.0.0.1', () => socket.write(`${command}\r\nQUIT\r\n`));
		socket.on('data', (chunk) => (answer += chunk.toString()));
		socket.on('close', () => resolve(answer));
	});
}
