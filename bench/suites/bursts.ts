// Idempotency Burst at the node (the built package, no n8n): how soon the execution holding a burst
// returns it after its quiet period's end, with many bursts open at once on a pool of 10; and what an item
// joining an open burst costs against a plain claim (the claim node, Claim Once, a new key), one-item
// executions in alternating blocks.
import type { IDataObject } from 'n8n-workflow';

import { START_SLACK_MS } from '../../harness/webhooks/chatConversations';
import { ratioRow, type Benchmark } from '../lib/benchmark';
import { freshIds, nodeClaimer, nodeRunner } from '../lib/nodeClaims';
import { rotatedRounds } from '../lib/rounds';
import { elapsedMs, formatMs, median, summarize } from '../lib/stats';

const TABLE = 'bench_bursts';
const BURSTS = `${TABLE}_bursts`;
const CLAIMS = 'bench_bursts_claims';
const POOL = 10;
const QUIET_MS = 300;
const TARGET = { lateMedianMs: 100, joinRatio: 1.5 };

export const title = '7. Idempotency Burst at the node';
export const run: Benchmark = async ({ dist, credentials, pool, quick, log, check }) => {
	const small = { ...credentials, maxConnections: POOL };
	const burstNode = nodeRunner(dist, 'IdempotencyBurst', small, TABLE);
	const collect = (chat: string, n: number, rules: IDataObject) =>
		burstNode(
			[{ json: chatItem(chat, n) }],
			{
				operation: 'collect',
				edge: 'trailing',
				maxWaitSeconds: 600,
				maxItems: 10_000,
				leaseSeconds: 600,
				...rules,
			},
			(name) => (name === 'burstKey' ? chat : undefined),
		);
	await pool.query(`DROP TABLE IF EXISTS ${BURSTS}, ${TABLE}_burst_items, ${CLAIMS}`);
	await collect('warm-up', 0, { quietSeconds: 0.01 }); // creates the tables, outside the timing

	// 1. Late: rounds of 25 chats at once, each a holder and 3 joiners 40 ms apart. A joiner that reaches
	// the database after the burst's quiet period ended starts a burst of its own (a slow machine can
	// delay one that long): every message must still run in exactly one burst, and a burst may end
	// before a message only if that message arrived after the end.
	const rounds = quick ? 2 : 12;
	const chats = 25;
	const late: number[] = [];
	let splitChats = 0;
	const lateCollect = async (chat: string, n: number) => {
		const [[out]] = await collect(chat, n, { quietSeconds: QUIET_MS / 1000 });
		if (!out) return undefined;
		const burst = out.json.burst as IDataObject;
		late.push(Date.now() - Date.parse(String(burst.endedAt)));
		return burst;
	};
	for (let round = 0; round < rounds; round++) {
		await Promise.all(
			Array.from({ length: chats }, async (_, c) => {
				const chat = `late-${round}-${c}`;
				const runs = [lateCollect(chat, 0)];
				await new Promise((resolve) => setTimeout(resolve, 20 + c * 4));
				for (let n = 1; n <= 3; n++) {
					const joiner = lateCollect(chat, n);
					runs.push(joiner);
					await joiner;
					await new Promise((resolve) => setTimeout(resolve, 40));
				}
				const bursts = (await Promise.all(runs)).filter((burst) => burst !== undefined);
				checkChatBursts(chat, bursts, check);
				if (bursts.length > 1) splitChats++;
			}),
		);
	}
	const lateSummary = summarize(late);
	log(
		`burst at the node: returned after its quiet period's end: median ${formatMs(lateSummary.p50)}, p95 ${formatMs(lateSummary.p95)}; ${splitChats} of ${rounds * chats} chats split by a late joiner`,
	);

	// 2. A joining item vs a plain claim, one-item executions, alternating blocks.
	const open = 20;
	const holders = Array.from({ length: open }, (_, c) =>
		collect(`join-${c}`, 0, { quietSeconds: 3600 }),
	);
	const claimer = nodeClaimer(dist, small, CLAIMS);
	await claimer.run(claimer.prepare(freshIds(1))); // creates the claim table, outside the timing
	const block = quick ? 40 : 200;
	let sent = 0;
	const perRound = await rotatedRounds(quick ? 4 : 16, ['join', 'claim'] as const, async (side) => {
		const times: number[] = [];
		if (side === 'claim') {
			for (const context of freshIds(block).map((id) => claimer.prepare([id]))) {
				const started = process.hrtime.bigint();
				await claimer.run(context);
				times.push(elapsedMs(started));
			}
		} else {
			for (let i = 0; i < block; i++) {
				const n = ++sent;
				const started = process.hrtime.bigint();
				const [, joined] = await collect(`join-${n % open}`, n, { quietSeconds: 3600 });
				times.push(elapsedMs(started));
				check(joined.length === 1, 'joining item: did not leave on Joined');
			}
		}
		return median(times);
	});
	const joinMs = median(perRound.map(([join]) => join));
	const claimMs = median(perRound.map(([, claim]) => claim));
	const ratio = median(perRound.map(([join, claim]) => join / claim));
	// End the open bursts, so their holders return.
	await pool.query(`UPDATE ${BURSTS} SET quiet_until = clock_timestamp() WHERE state = 'open'`);
	const ended = await Promise.all(holders);
	check(
		ended.every((outputs) => outputs[0].length === 1),
		'joining item: an open burst did not end with its items',
	);
	const joinedItems = ended.reduce(
		(sum, outputs) => sum + ((outputs[0][0].json.burst as IDataObject).count as number),
		0,
	);
	check(joinedItems === sent + open, `joining item: ${sent + open - joinedItems} items lost`);
	await pool.query(`DROP TABLE IF EXISTS ${BURSTS}, ${TABLE}_burst_items, ${CLAIMS}`);

	return {
		rows: [
			{
				measure: `a burst's execution returns it after its quiet period's end, ${chats} bursts open at once, pool of ${POOL} (median; p95)`,
				value: `${formatMs(lateSummary.p50)}; ${formatMs(lateSummary.p95)}`,
				target: `≤ ${TARGET.lateMedianMs} ms (median)`,
				met: lateSummary.p50 <= TARGET.lateMedianMs,
			},
			ratioRow(
				'an item joining an open burst ÷ a plain claim (Claim Once, new key), one-item executions',
				ratio,
				{ max: TARGET.joinRatio },
			),
		],
		details: [
			`Quiet period ${QUIET_MS} ms; ${rounds} rounds of ${chats} chats at once, each a holder and 3 joiners 40 ms apart: ` +
				`${late.length} bursts, returned ${formatMs(lateSummary.p50)} (median), ${formatMs(lateSummary.p95)} (p95), ` +
				`${formatMs(lateSummary.max)} (max) after the end the database recorded (both clocks are this machine's); ` +
				`${splitChats} of ${rounds * chats} chats ran as two bursts or more, a joiner having reached the database after the quiet period's end.`,
			`Joining: ${open} open bursts, items sent to them in turn; time per one-item execution ${formatMs(joinMs)} (join) ` +
				`vs ${formatMs(claimMs)} (claim), median of ${perRound.length} alternating blocks of ${block}. A join is one ` +
				'statement (the upsert that takes the burst row lock, and the item row) where a claim is one insert.',
		].join('\n\n'),
	};
};

/**
 * Each of the chat's 4 messages ran in exactly one burst, and where a burst ended before the next
 * message, that message arrived after the end (its quiet period had passed; START_SLACK_MS for an item timed
 * when its statement began, before it waited for the one that ended the burst).
 */
function checkChatBursts(
	chat: string,
	bursts: IDataObject[],
	check: (condition: boolean, message: string) => boolean,
): void {
	const ran = bursts
		.flatMap((burst) => burst.items as IDataObject[])
		.map((item) => ((item.body as IDataObject).message as IDataObject).message_id as number)
		.sort();
	check(
		ran.join() === '0,1,2,3',
		`burst at the node: chat ${chat} ran messages [${ran.join()}], not each of 0–3 once`,
	);
	const ordered = [...bursts].sort(
		(a, b) => Date.parse(String(a.openedAt)) - Date.parse(String(b.openedAt)),
	);
	for (let i = 1; i < ordered.length; i++) {
		const endedAt = Date.parse(String(ordered[i - 1].endedAt));
		const nextArrival = Date.parse((ordered[i].arrivedAt as string[])[0]);
		check(
			nextArrival >= endedAt - START_SLACK_MS,
			`burst at the node: chat ${chat}'s burst ended at ${String(ordered[i - 1].endedAt)}, before its next message arrived (${(ordered[i].arrivedAt as string[])[0]}), yet that message ran apart`,
		);
	}
}

/** A chat message as a Webhook node hands it over (Telegram's update shape). */
function chatItem(chat: string, n: number): IDataObject {
	return {
		headers: { 'content-type': 'application/json', 'user-agent': 'bench' },
		params: {},
		query: {},
		body: { update_id: n, message: { message_id: n, chat: { id: chat }, text: `message ${n}` } },
	};
}
