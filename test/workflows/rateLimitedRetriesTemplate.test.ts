/**
 * workflows/rate-limited-retries-template.json, as a user imports it: the webhook's new events and the
 * template's own retry schedule lead into one Check Rate whose Limit Key is the downstream's name, so both
 * paths share its limit; Allowed runs Write and Complete; Limited keeps the event with Retry Later, due
 * when Check Rate says the window lets it through and not counted as an attempt, and the sender is told
 * 202. Running it in real n8n: test/e2e/rateLimitedRetries.e2e.test.ts.
 */
import { readShippedWorkflow } from '../support/shippedWorkflowFile';

const workflow = readShippedWorkflow('rate-limited-retries-template.json');
const node = (name: string) => workflow.nodes.find((candidate) => candidate.name === name)!;
const targets = (from: string, output: number) =>
	(workflow.connections[from]?.main[output] ?? []).map((target) => target.node);
const answer = (name: string) =>
	(node(name).parameters.options as { responseCode: number }).responseCode;

const RATE = 'Partner API Rate (10 per 60 s)';
const FROM_EVENT = "$('Event to Process').item.json.idempotency";

it('the webhook and the retry schedule (and Run Now) both reach one Check Rate, keyed by the downstream', () => {
	expect(node('Idempotency Claim').parameters).toMatchObject({
		claimMode: 'lease',
		keepEvent: true,
		options: { scope: 'rate-limited' },
	});
	expect(targets('Idempotency Claim', 0)).toEqual(['Event to Process']);
	expect(targets('Every Minute (retries)', 0)).toEqual(['Take Due Events']);
	expect(targets('Run Now', 0)).toEqual(['Take Due Events']);
	expect(targets('Take Due Events', 0)).toEqual(['Event to Process']);
	expect(targets('Event to Process', 0)).toEqual([RATE]);
	// A fixed key: every event, whichever path brings it, counts against the one downstream's rate. 65 s:
	// the partner's 60 s and a 5 s margin for the time from a start to its call (docs/limits.md).
	expect(node(RATE)).toMatchObject({
		type: 'n8n-nodes-idempotency.idempotencyLimit',
		onError: 'continueErrorOutput',
		parameters: {
			operation: 'checkRate',
			limitKey: 'partner-api',
			maxStarts: 10,
			windowSeconds: 65,
		},
	});
	const feeders = Object.entries(workflow.connections).filter(([, { main }]) =>
		main.flat().some((target) => target.node === RATE),
	);
	expect(feeders.map(([from]) => from)).toEqual(['Event to Process']);
});

it('Take Due Events takes its own Scope, at most as many events per run as the rate allows', () => {
	expect(node('Take Due Events').parameters).toMatchObject({
		operation: 'takeDue',
		scope: 'rate-limited',
		maxEvents: 10,
	});
});

it('Allowed runs Write and Complete (200); its failure, or a Check Rate that failed, goes to the backoff Retry Later (500)', () => {
	expect(targets(RATE, 0)).toEqual(['Write and Complete']);
	expect(targets(RATE, 2)).toEqual(['Retry Later']);
	expect(node('Write and Complete')).toMatchObject({
		onError: 'continueErrorOutput',
		parameters: {
			operation: 'completeWithWrite',
			queryParameters: expect.stringMatching(
				/^=\{\{ \[ \$\('Event to Process'\)\.item\.json\.idempotency\.key, /,
			),
		},
	});
	expect(targets('Write and Complete', 0).map(answer)).toEqual([200]);
	expect(targets('Write and Complete', 1)).toEqual(['Retry Later']);
	expect(node('Retry Later').parameters).toMatchObject({
		operation: 'retryLater',
		key: `={{ ${FROM_EVENT}.key }}`,
		claimId: `={{ ${FROM_EVENT}.claimId }}`,
	});
	expect(node('Retry Later').parameters.delay ?? 'backoff').toBe('backoff');
	expect(node('Retry Later').parameters.countAttempt ?? true).toBe(true);
	expect([0, 1].map((output) => answer(targets('Retry Later', output)[0]))).toEqual([500, 500]);
});

it("Limited keeps the event until Check Rate's retryAfterSeconds, not counted as an attempt, and tells the sender 202", () => {
	const [wait] = targets(RATE, 1);
	expect(node(wait)).toMatchObject({
		type: 'n8n-nodes-idempotency.idempotencyKey',
		onError: 'continueErrorOutput',
		parameters: {
			operation: 'retryLater',
			key: `={{ ${FROM_EVENT}.key }}`,
			claimId: `={{ ${FROM_EVENT}.claimId }}`,
			delay: 'perItem',
			delaySeconds: '={{ $json.idempotency.rate.retryAfterSeconds }}',
			countAttempt: false,
		},
	});
	expect(targets(wait, 0).map(answer)).toEqual([202]);
	// Not scheduled (the database failed): the claim's lease brings it back; the sender hears 500.
	expect(targets(wait, 1).map(answer)).toEqual([500]);
});
