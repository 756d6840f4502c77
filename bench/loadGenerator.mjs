// A small HTTP load generator for loopback: a bounded list of requests sent by a fixed number of
// concurrent clients (each sends its next request when the previous answer is in), timing every request.
import { elapsedMs } from './stats.mjs';

/**
 * @param {Array<{ url: string, body: string, headers?: Record<string,string> }>} requests
 * @param {{ concurrency: number, timeoutMs?: number }} options
 * @returns {Promise<{ latencies: number[], statuses: Record<number, number>, answers: Array<{status:number, body:string}>, wallMs: number }>}
 */
export async function runLoad(requests, { concurrency, timeoutMs = 60_000 }) {
	const latencies = new Array(requests.length);
	const answers = new Array(requests.length);
	let next = 0;
	const started = process.hrtime.bigint();
	const client = async () => {
		while (next < requests.length) {
			const index = next++;
			answers[index] = await send(requests[index], timeoutMs, (ms) => (latencies[index] = ms));
		}
	};
	await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, client));
	const wallMs = elapsedMs(started);
	const statuses = {};
	for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
	return { latencies, statuses, answers, wallMs, perSecond: requests.length / (wallMs / 1000) };
}

/** Sends every request of each group at the same moment (e.g. 8 deliveries of one event), group after group. */
export async function runGroups(groups, { timeoutMs = 60_000 } = {}) {
	const latencies = [];
	const answers = [];
	const started = process.hrtime.bigint();
	for (const group of groups) {
		const groupAnswers = await Promise.all(group.map((request) => send(request, timeoutMs, (ms) => latencies.push(ms))));
		answers.push(...groupAnswers);
	}
	const wallMs = elapsedMs(started);
	const statuses = {};
	for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
	return { latencies, statuses, answers, wallMs, perSecond: answers.length / (wallMs / 1000) };
}

async function send(request, timeoutMs, record) {
	const started = process.hrtime.bigint();
	try {
		const response = await fetch(request.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json', ...request.headers },
			body: request.body,
			signal: AbortSignal.timeout(timeoutMs),
		});
		const body = await response.text();
		record(elapsedMs(started));
		return { status: response.status, body };
	} catch (error) {
		record(elapsedMs(started));
		return { status: 0, body: String(error?.cause?.code ?? error?.message ?? error) };
	}
}
