/**
 * Chat conversations sent to a burst-collecting webhook the way people type, and what the work made of
 * them. A plan (seeded, so a failing run can be replayed) gives each conversation bursts of messages
 * from one or two senders at once; each sender waits for the webhook's answer before its next message,
 * after a gap well inside the quiet period; between bursts the senders pause well past it, or, in some
 * conversations, about as long as it (either outcome is then allowed: the rules are checked on the
 * database's times). A message that is not answered 200 is sent again with the same update_id, as
 * Telegram retries.
 *
 * The work (test/e2e/fixtures/burstWorkflow.ts) writes each burst to `burst_runs`: its messages' texts
 * in arrival order, their arrival times, how it ended. `burstFindings` compares that with the plan.
 */
import type { Pool } from 'pg';

import { seededRandom } from './seededRandom';

export interface ChatMessage {
	chat: string;
	sender: string;
	updateId: number;
	/** `<chat>|<sender>|<n>`: the sender's n-th message, what the work receives as text. */
	text: string;
}

export interface PlannedBurst {
	/** Per sender, its messages in the order it sends them. */
	senders: ChatMessage[][];
	/** The pause after this burst's last answer before the next burst's first message. */
	pauseAfterMs: number;
}

export interface Conversation {
	chat: string;
	bursts: PlannedBurst[];
}

export interface PlanOptions {
	conversations: number;
	quietMs: number;
	seed: number;
	/** Planned burst sizes, taken in turn (default 1 to 20). */
	sizes?: number[];
	burstsPerConversation?: number;
	/** Update ids start here (distinct runs against one table must not share them). */
	firstUpdateId?: number;
}

/** Burst sizes from 1 to 20, 7.65 messages on average. */
export const BURST_SIZES = [1, 20, 3, 12, 2, 7, 1, 16, 5, 9, 4, 14, 2, 6, 10, 3, 18, 8, 11, 1];
/** From 1 to 20 as well, 3.9 on average: the same shapes with half the messages (CI's runs). */
export const SMALL_BURST_SIZES = [1, 20, 2, 1, 3, 5, 1, 2, 8, 1, 2, 4, 1, 12, 2, 1, 3, 1, 6, 2];

/** What a run sent and got back, in one line: messages, bursts, how they ended, answer times. */
export function runSummary(sent: SentMessage[], findings: BurstFindings, tookMs: number): string {
	const answered = sent.map((message) => message.answeredInMs).sort((a, b) => a - b);
	const at = (share: number) =>
		answered[Math.min(answered.length - 1, Math.floor(answered.length * share))];
	const retried = sent.filter((message) => message.attempts > 1).length;
	return (
		`${findings.messages} messages (${retried} sent again) in ${findings.bursts} bursts ` +
		`(${JSON.stringify(findings.endedBy)}) in ${(tookMs / 1000).toFixed(1)} s; ` +
		`answered in ${at(0.5)} ms (median), ${at(0.95)} ms (p95)`
	);
}

export function planConversations(options: PlanOptions): Conversation[] {
	const random = seededRandom(options.seed);
	const sizes = options.sizes ?? BURST_SIZES;
	let updateId = options.firstUpdateId ?? 1;
	let nextSize = 0;
	return Array.from({ length: options.conversations }, (_, c) => {
		const chat = `chat${c}-${options.seed}`;
		const senderNames = c % 2 === 0 ? ['a', 'b'] : ['a'];
		const sent = new Map(senderNames.map((name) => [name, 0]));
		const bursts = Array.from({ length: options.burstsPerConversation ?? 2 }, () => {
			const size = sizes[nextSize++ % sizes.length];
			const senders: ChatMessage[][] = senderNames.map(() => []);
			for (let i = 0; i < size; i++) {
				const s = i % senderNames.length;
				const sender = senderNames[s];
				const n = sent.get(sender)! + 1;
				sent.set(sender, n);
				senders[s].push({ chat, sender, updateId: updateId++, text: `${chat}|${sender}|${n}` });
			}
			// A third of the conversations pause about a quiet period between bursts: either split is right.
			const pauseAfterMs =
				c % 3 === 2 ? options.quietMs * (0.8 + 0.4 * random()) : options.quietMs * (2 + random());
			return { senders: senders.filter((list) => list.length > 0), pauseAfterMs };
		});
		return { chat, bursts };
	});
}

/**
 * The fewest bursts the plan can make: one per conversation, plus one per pause longer than the quiet
 * period (each sender waits for its answer, so a pause is never shorter than planned).
 */
export function fewestBursts(conversations: Conversation[], quietMs: number): number {
	return conversations.reduce(
		(sum, c) => sum + 1 + c.bursts.slice(0, -1).filter((b) => b.pauseAfterMs > quietMs).length,
		0,
	);
}

export interface SentMessage extends ChatMessage {
	status: number;
	attempts: number;
	/** From sending the message (its first attempt) to its 200 answer. */
	answeredInMs: number;
}

export interface SendOptions {
	quietMs: number;
	seed: number;
	/** Gaps between one sender's messages: uniform from 0 to this share of the quiet period. */
	gapShare?: number;
	/** Give up on a message after this long without a 200. */
	giveUpAfterMs?: number;
	/** Send a message again when no answer came in this long (default 30 s). */
	answerTimeoutMs?: number;
	/** Conversations start spread over this long (default one quiet period). */
	spreadMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends every conversation at once; resolves when every message has been answered 200 (or given up on). */
export async function sendConversations(
	url: string,
	conversations: Conversation[],
	options: SendOptions,
): Promise<SentMessage[]> {
	const random = seededRandom(options.seed + 1);
	const sent: SentMessage[] = [];
	const gapMs = () => random() * (options.gapShare ?? 0.4) * options.quietMs;
	await Promise.all(
		conversations.map(async (conversation, c) => {
			// Conversations start spread out, not all in the same millisecond.
			await sleep(random() * (options.spreadMs ?? options.quietMs));
			for (const burst of conversation.bursts) {
				await Promise.all(
					burst.senders.map(async (messages) => {
						for (let i = 0; i < messages.length; i++) {
							if (i > 0) await sleep(gapMs());
							sent.push(await sendMessage(url, messages[i], options));
						}
					}),
				);
				await sleep(burst.pauseAfterMs);
			}
			return c;
		}),
	);
	return sent;
}

/** One message, sent again every half second until it is answered 200. */
export async function sendMessage(
	url: string,
	message: ChatMessage,
	{ giveUpAfterMs = 120_000, answerTimeoutMs = 30_000 }: Partial<SendOptions> = {},
): Promise<SentMessage> {
	const body = JSON.stringify({
		update_id: message.updateId,
		message: {
			message_id: message.updateId,
			chat: { id: message.chat },
			from: { id: message.sender },
			text: message.text,
		},
	});
	const started = Date.now();
	let attempts = 0;
	let status = 0;
	while (Date.now() - started < giveUpAfterMs) {
		attempts++;
		try {
			const response = await fetch(url, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body,
				signal: AbortSignal.timeout(answerTimeoutMs),
			});
			await response.text();
			status = response.status;
			if (status === 200) break;
		} catch {
			status = 0;
		}
		await sleep(500);
	}
	return { ...message, status, attempts, answeredInMs: Date.now() - started };
}

export interface BurstRun {
	burstId: string;
	chat: string;
	texts: string[];
	arrived: number[];
	endedBy: string;
	openedAt: number;
	endedAt: number;
	takenOver: boolean;
	ranAt: number;
	runs: number;
}

export async function readBurstRuns(db: Pool): Promise<BurstRun[]> {
	const { rows } = await db.query(
		'SELECT burst_id, chat, texts, arrived, ended_by, opened_at, ended_at, taken_over, ran_at, runs FROM burst_runs',
	);
	return rows.map((row) => ({
		burstId: row.burst_id,
		chat: row.chat,
		texts: row.texts === '' ? [] : row.texts.split('\n'),
		arrived: row.arrived === '' ? [] : row.arrived.split(',').map((iso: string) => Date.parse(iso)),
		endedBy: row.ended_by,
		openedAt: row.opened_at.getTime(),
		endedAt: row.ended_at.getTime(),
		takenOver: row.taken_over,
		ranAt: row.ran_at.getTime(),
		runs: row.runs,
	}));
}

/** Waits until every planned message is in some burst the work ran, or the time is up. */
export async function waitForBurstRuns(
	db: Pool,
	messages: number,
	timeoutMs: number,
): Promise<BurstRun[]> {
	const deadline = Date.now() + timeoutMs;
	let runs = await readBurstRuns(db);
	while (runs.reduce((sum, run) => sum + run.texts.length, 0) < messages && Date.now() < deadline) {
		await sleep(250);
		runs = await readBurstRuns(db);
	}
	return runs;
}

export interface BurstRules {
	quietMs: number;
	maxItems: number;
	maxWaitMs: number;
}

/** Everything that went against the guarantees; every list empty means the run kept them all. */
export interface BurstFindings {
	messages: number;
	bursts: number;
	/** Messages in no burst the work ran. */
	lost: string[];
	/** Messages in more than one burst. */
	duplicated: string[];
	/** Bursts the work ran more than once (after a lease ran out). */
	reRun: string[];
	/** Splits against the rules, on the database's times. */
	ruleBreaks: string[];
	/** A sender's messages out of the order it sent them. */
	orderBreaks: string[];
	/** Bursts per planned burst size, and how they ended. */
	endedBy: Record<string, number>;
}

/**
 * An item that had to wait for the statement that ended the burst before it is timed when its statement
 * began, a few milliseconds before that end (docs/bursts.md), more when a busy machine delays that
 * statement's commit: the rule checks allow this much.
 */
export const START_SLACK_MS = 100;

export function burstFindings(
	conversations: Conversation[],
	runs: BurstRun[],
	rules: BurstRules,
): BurstFindings {
	const planned = conversations.flatMap((c) => c.bursts.flatMap((b) => b.senders.flat()));
	const where = new Map<string, string[]>();
	for (const run of runs)
		for (const text of run.texts) where.set(text, [...(where.get(text) ?? []), run.burstId]);
	const findings: BurstFindings = {
		messages: planned.length,
		bursts: runs.length,
		lost: planned.filter((m) => !where.has(m.text)).map((m) => m.text),
		duplicated: [...where].filter(([, ids]) => ids.length > 1).map(([text]) => text),
		reRun: runs.filter((run) => run.runs > 1).map((run) => run.burstId),
		ruleBreaks: [],
		orderBreaks: [],
		endedBy: {},
	};
	for (const run of runs) findings.endedBy[run.endedBy] = (findings.endedBy[run.endedBy] ?? 0) + 1;
	for (const { chat } of conversations) {
		const ofChat = runs.filter((run) => run.chat === chat).sort((a, b) => a.openedAt - b.openedAt);
		for (const run of ofChat) {
			const broke = (what: string) =>
				findings.ruleBreaks.push(`${chat} burst ${run.burstId}: ${what}`);
			if (run.texts.length > rules.maxItems) broke(`${run.texts.length} items`);
			for (let i = 1; i < run.arrived.length; i++) {
				const gap = run.arrived[i] - run.arrived[i - 1];
				if (gap < 0) broke(`arrival ${i} before arrival ${i - 1}`);
				// Times come as milliseconds cut from microseconds: a gap just under the quiet period can read as it.
				if (gap > rules.quietMs) broke(`a gap of ${gap} ms inside the burst`);
			}
			if (run.arrived.at(-1)! - run.arrived[0] > rules.maxWaitMs) broke('longer than Max Wait');
			const quietEnd = run.endedAt - run.arrived.at(-1)!;
			if (run.endedBy === 'quiet' && Math.abs(quietEnd - rules.quietMs) > 2)
				broke(`ended ${quietEnd} ms after its last item`);
		}
		for (let i = 1; i < ofChat.length; i++)
			if (ofChat[i].openedAt < ofChat[i - 1].endedAt - START_SLACK_MS)
				findings.ruleBreaks.push(
					`${chat}: burst ${ofChat[i].burstId} opened before burst ${ofChat[i - 1].burstId} ended`,
				);
		// Each sender waits for an answer before its next message: its order must be kept, in and across bursts.
		const arrivals = ofChat.flatMap((run) =>
			run.texts.map((text, i) => ({ text, at: run.arrived[i] })),
		);
		const bySender = new Map<string, Array<{ n: number; at: number }>>();
		for (const { text, at } of arrivals) {
			const [, sender, n] = text.split('|');
			bySender.set(sender, [...(bySender.get(sender) ?? []), { n: Number(n), at }]);
		}
		for (const [sender, list] of bySender) {
			const byTime = [...list].sort((a, b) => a.at - b.at || a.n - b.n).map((entry) => entry.n);
			const inOrder = [...byTime].sort((a, b) => a - b);
			if (byTime.join() !== inOrder.join())
				findings.orderBreaks.push(`${chat} sender ${sender}: ${byTime.join(',')}`);
		}
		// Within a burst, `texts` is the arrival order: a sender's messages in it must be in its order too.
		for (const run of ofChat) {
			const seen = new Map<string, number>();
			for (const text of run.texts) {
				const [, sender, n] = text.split('|');
				if ((seen.get(sender) ?? 0) > Number(n))
					findings.orderBreaks.push(`${chat} burst ${run.burstId}: ${run.texts.join(' ')}`);
				seen.set(sender, Number(n));
			}
		}
	}
	return findings;
}
