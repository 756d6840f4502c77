import { deliver } from './deliver';

/**
 * A webhook provider under load, the way Stripe or GitHub behave: each event may be sent several times at
 * once (a burst), bursts go out in the given order with a bounded number in flight, and every delivery that
 * is not answered 2xx (409, 500, a network error) is sent again after a short delay, growing with each attempt
 * (backoff), until it is. Bounded:
 * a delivery gives up after `maxAttempts`, and nothing new is sent after `deadlineMs`.
 */
export interface ProviderEvent {
	key: string;
	body: string;
}

export interface ProviderAnswer {
	event: ProviderEvent;
	attempt: number;
	/** HTTP status, or 0 for a network error / timeout. */
	status: number;
	body: { status?: string; key?: string; [field: string]: unknown };
}

export interface ProviderOptions {
	url: string;
	/** `maxAttempts` here overrides the sender's for one event (1: sent once and never again, GitHub's way). */
	bursts: Array<{ event: ProviderEvent; copies: number; maxAttempts?: number }>;
	/** Bursts (first deliveries) or single retries in flight at once. */
	concurrency: number;
	/** Delay before the first retry, drawn between min and max; each further retry waits 1.5× longer, up to 5 s. */
	retryDelayMs: { min: number; max: number };
	maxAttempts: number;
	deadlineMs: number;
	requestTimeoutMs?: number;
	/** Called before the n-th request (1-based) is sent; awaited by that request only. */
	beforeRequest?(requestNumber: number): Promise<void> | void;
	/** Called with every answer before the provider decides whether to retry. */
	onAnswer?(answer: ProviderAnswer): Promise<void> | void;
	/** The headers that sign one attempt (default: a made-up signature that differs on every attempt). */
	sign?(event: ProviderEvent, attempt: number): Record<string, string>;
}

export interface ProviderReport {
	requests: number;
	retries: number;
	/** Why retries were needed: answers that were not 2xx, by status ("network" for no answer). */
	retriesByStatus: Record<string, number>;
	/** Every answer, by HTTP status and body status, e.g. "200 processed", "409 in_progress". */
	answers: Record<string, number>;
	/** Deliveries that never got a 2xx answer (attempts used up or deadline passed). */
	undelivered: Array<{ key: string; attempts: number; last: string }>;
	maxAttemptsUsed: number;
	seconds: number;
}

const MAX_RETRY_DELAY_MS = 5_000;

interface Delivery {
	event: ProviderEvent;
	attempts: number;
	maxAttempts: number;
	last: string;
}

export async function runRetryingProvider(options: ProviderOptions): Promise<ProviderReport> {
	const started = Date.now();
	const deadline = started + options.deadlineMs;
	const report: ProviderReport = {
		requests: 0,
		retries: 0,
		retriesByStatus: {},
		answers: {},
		undelivered: [],
		maxAttemptsUsed: 0,
		seconds: 0,
	};
	const waiting = options.bursts.map(({ event, copies, maxAttempts = options.maxAttempts }) =>
		Array.from({ length: copies }, (): Delivery => ({ event, attempts: 0, maxAttempts, last: '' })),
	);
	const dueRetries: Delivery[][] = [];
	/** Retries waiting for their delay, by timer. */
	const timers = new Map<ReturnType<typeof setTimeout>, Delivery>();
	/** Idle workers, woken when a retry falls due. */
	const idle = new Set<() => void>();

	const giveUp = ({ event, attempts, last }: Delivery) =>
		report.undelivered.push({ key: event.key, attempts, last: last || 'not sent' });

	const scheduleRetry = (delivery: Delivery) => {
		const { min, max } = options.retryDelayMs;
		const backoff = Math.min(MAX_RETRY_DELAY_MS / max, 1.5 ** (delivery.attempts - 1));
		const timer = setTimeout(
			() => {
				timers.delete(timer);
				dueRetries.push([delivery]);
				for (const wake of idle) wake();
			},
			(min + Math.random() * (max - min)) * backoff,
		);
		timers.set(timer, delivery);
	};

	const send = async (delivery: Delivery): Promise<void> => {
		delivery.attempts++;
		const requestNumber = ++report.requests;
		if (delivery.attempts > 1) report.retries++;
		report.maxAttemptsUsed = Math.max(report.maxAttemptsUsed, delivery.attempts);
		await options.beforeRequest?.(requestNumber);
		const answer = await post(
			options.url,
			delivery.event,
			delivery.attempts,
			options.requestTimeoutMs ?? 60_000,
			options.sign ?? madeUpSignature,
		);
		const label = answer.status === 0 ? 'network' : String(answer.status);
		const answerLabel = `${label} ${answer.body.status ?? '-'}`;
		report.answers[answerLabel] = (report.answers[answerLabel] ?? 0) + 1;
		delivery.last = answerLabel;
		await options.onAnswer?.(answer);
		if (answer.status >= 200 && answer.status < 300) return;
		report.retriesByStatus[label] = (report.retriesByStatus[label] ?? 0) + 1;
		if (delivery.attempts >= delivery.maxAttempts || Date.now() >= deadline) giveUp(delivery);
		else scheduleRetry(delivery);
	};

	const worker = async () => {
		for (;;) {
			if (Date.now() >= deadline) return;
			// Due retries first, so a retry waits about its delay and not for the whole backlog.
			const next = dueRetries.shift() ?? waiting.shift();
			if (next) {
				await Promise.all(next.map(send));
				continue;
			}
			if (timers.size === 0) return;
			await new Promise<void>((resolve) => {
				const wake = () => {
					idle.delete(wake);
					resolve();
				};
				idle.add(wake);
			});
		}
	};
	await Promise.all(Array.from({ length: options.concurrency }, worker));

	for (const timer of timers.keys()) clearTimeout(timer);
	for (const group of [...waiting, ...dueRetries, [...timers.values()]]) group.forEach(giveUp);
	report.seconds = (Date.now() - started) / 1000;
	return report;
}

/** The signature differs on every attempt, as a real provider's does; the key must not depend on it. */
const madeUpSignature = (_event: ProviderEvent, attempt: number) => ({
	'webhook-signature': `t=${Date.now()},a=${attempt}`,
});

async function post(
	url: string,
	event: ProviderEvent,
	attempt: number,
	timeoutMs: number,
	sign: (event: ProviderEvent, attempt: number) => Record<string, string>,
): Promise<ProviderAnswer> {
	try {
		const { status, body } = await deliver(url, event.body, sign(event, attempt), timeoutMs);
		return { event, attempt, status, body };
	} catch (error) {
		return { event, attempt, status: 0, body: { error: (error as Error).message } };
	}
}
