import { seededRandom } from '../../harness/webhooks/seededRandom';

/** One webhook event of the storm: its body, the key the template derives from it, and its planned failures. */
export interface StormEvent {
	index: number;
	key: string;
	body: string;
	/** How many business-step attempts for this event are made to fail before one may succeed. */
	failures: number;
}

export interface StormPlan {
	seed: number;
	events: StormEvent[];
	/** Events in delivery order; each burst is the same event delivered `copies` times at once. */
	bursts: Array<{ event: StormEvent; copies: number }>;
	deliveries: number;
	plannedFailures: number;
}

export interface StormPlanOptions {
	events: number;
	seed: number;
	/** Share of events whose business step fails (a quarter of those fail twice). */
	failureRate: number;
	maxCopies: number;
	/** Makes the event ids unique per run, so a reused database cannot already hold them. */
	tag: string;
}

/** Everything random about the storm, decided up front from one seed. */
export function planStorm({
	events: count,
	seed,
	failureRate,
	maxCopies,
	tag,
}: StormPlanOptions): StormPlan {
	const random = seededRandom(seed);
	const events: StormEvent[] = [];
	const bursts: StormPlan['bursts'] = [];
	for (let index = 0; index < count; index++) {
		const id = `evt_storm_${tag}_${index}`;
		const failures = random() < failureRate ? (random() < 0.25 ? 2 : 1) : 0;
		const event: StormEvent = {
			index,
			key: `evt:${id}`,
			body: JSON.stringify({
				id,
				object: 'event',
				type: 'order.paid',
				data: { object: { order: index, amount: 100 + index } },
			}),
			failures,
		};
		events.push(event);
		bursts.push({ event, copies: 1 + Math.floor(random() * maxCopies) });
	}
	// Fisher–Yates: bursts arrive in random order.
	for (let i = bursts.length - 1; i > 0; i--) {
		const j = Math.floor(random() * (i + 1));
		[bursts[i], bursts[j]] = [bursts[j], bursts[i]];
	}
	return {
		seed,
		events,
		bursts,
		deliveries: bursts.reduce((sum, burst) => sum + burst.copies, 0),
		plannedFailures: events.reduce((sum, event) => sum + event.failures, 0),
	};
}
