// A small HTTP load generator for loopback: deliveries (harness/webhooks/deliver.ts) sent by a fixed number
// of concurrent clients, or in groups sent at the same moment, timing every request.
import { deliver, type Delivery } from '../../harness/webhooks/deliver';
import { elapsedMs } from './stats';

export interface LoadRequest {
	url: string;
	body: string;
	headers?: Record<string, string>;
}

export interface LoadResult {
	latencies: number[];
	statuses: Record<number, number>;
	/** Every answer; status 0 when there was none (its body then says why). */
	answers: Delivery[];
	wallMs: number;
	perSecond: number;
}

/** Each of `concurrency` clients sends its next request when its previous answer is in. */
export async function runLoad(
	requests: LoadRequest[],
	{ concurrency, timeoutMs = 60_000 }: { concurrency: number; timeoutMs?: number },
): Promise<LoadResult> {
	const latencies: number[] = new Array(requests.length);
	const answers: Delivery[] = new Array(requests.length);
	let next = 0;
	const started = process.hrtime.bigint();
	const client = async () => {
		while (next < requests.length) {
			const index = next++;
			answers[index] = await send(requests[index], timeoutMs, (ms) => (latencies[index] = ms));
		}
	};
	await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, client));
	return result(latencies, answers, elapsedMs(started));
}

/** Sends every request of each group at the same moment (e.g. 8 deliveries of one event), group after group. */
export async function runGroups(
	groups: LoadRequest[][],
	{ timeoutMs = 60_000 } = {},
): Promise<LoadResult> {
	const latencies: number[] = [];
	const answers: Delivery[] = [];
	const started = process.hrtime.bigint();
	for (const group of groups) {
		answers.push(
			...(await Promise.all(
				group.map((request) => send(request, timeoutMs, (ms) => latencies.push(ms))),
			)),
		);
	}
	return result(latencies, answers, elapsedMs(started));
}

/** Several runs as one: every latency and answer, their wall times added up. */
export function combinedLoad(runs: LoadResult[]): LoadResult {
	return result(
		runs.flatMap((run) => run.latencies),
		runs.flatMap((run) => run.answers),
		runs.reduce((ms, run) => ms + run.wallMs, 0),
	);
}

function result(latencies: number[], answers: Delivery[], wallMs: number): LoadResult {
	const statuses: Record<number, number> = {};
	for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
	return { latencies, statuses, answers, wallMs, perSecond: answers.length / (wallMs / 1000) };
}

async function send(
	request: LoadRequest,
	timeoutMs: number,
	record: (ms: number) => void,
): Promise<Delivery> {
	const started = process.hrtime.bigint();
	try {
		return await deliver(request.url, request.body, request.headers, timeoutMs);
	} catch (error) {
		const { cause, message } = error as Error & { cause?: { code?: string } };
		return { status: 0, body: { error: cause?.code ?? message } };
	} finally {
		record(elapsedMs(started));
	}
}
