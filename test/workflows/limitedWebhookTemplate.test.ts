/**
 * workflows/limited-webhook-template.json, as a user imports it: the claim comes first, so a duplicate
 * never reaches the limit; Got Slot runs the business step, which frees its slot whether it succeeded or
 * failed; No Slot releases the event and answers 503 with the seconds Take Slot gave as Retry-After.
 * Running it in real n8n: test/e2e/limitsQueueMode.e2e.test.ts (queue mode, a worker killed mid-step).
 */
import { readShippedWorkflow, type ShippedNode } from '../support/shippedWorkflowFile';

const workflow = readShippedWorkflow('limited-webhook-template.json');
const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
const targets = (from: string, output: number) =>
	(workflow.connections[from]?.main[output] ?? []).map((target) => byName.get(target.node)!);
const typeOf = (nodes: ShippedNode[]) => nodes.map((node) => node.type);
const LIMIT = 'n8n-nodes-idempotency.idempotencyLimit';
const KEY = 'n8n-nodes-idempotency.idempotencyKey';
const RESPOND = 'n8n-nodes-base.respondToWebhook';
const take = workflow.nodes.find((node) => node.parameters.operation === 'takeSlot')!;

it('claims first: only a new event reaches Take Slot, which limits per customer', () => {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook')!;
	const [claim] = targets(webhook.name, 0);
	expect(claim.type).toBe('n8n-nodes-idempotency.idempotencyClaim');
	expect(targets(claim.name, 0)).toEqual([take]);
	const feeders = Object.entries(workflow.connections).filter(([, { main }]) =>
		main.flat().some((target) => target.node === take.name),
	);
	expect(feeders.map(([from]) => from)).toEqual([claim.name]);
	expect(take).toMatchObject({ type: LIMIT, onError: 'continueErrorOutput' });
	expect(take.parameters).toMatchObject({ limitKey: '={{ $json.body.customerId }}', maxAtOnce: 2 });
});

it('frees the slot after the business step, whether it succeeded or failed, then completes or releases', () => {
	const [step] = targets(take.name, 0);
	expect(step.onError).toBe('continueErrorOutput');
	for (const [output, settle, answer] of [
		[0, 'complete', 200],
		[1, 'release', 500],
	] as const) {
		const [free] = targets(step.name, output);
		expect(free.type).toBe(LIMIT);
		expect(free.parameters).toMatchObject({
			operation: 'freeSlot',
			slotId: `={{ $('${take.name}').item.json.idempotency.slot.slotId }}`,
		});
		// A Free Slot that fails still lets the done work complete: the slot's lease frees it.
		expect(free.onError).toBe('continueRegularOutput');
		const [settled] = targets(free.name, 0);
		expect(settled).toMatchObject({ type: KEY, parameters: { operation: settle } });
		const [respond] = targets(settled.name, 0);
		expect(respond.type).toBe(RESPOND);
		expect(respond.parameters).toMatchObject({ options: { responseCode: answer } });
	}
});

it("No Slot releases the event and answers 503 with Take Slot's retryAfterSeconds as Retry-After", () => {
	const [release] = targets(take.name, 1);
	expect(release).toMatchObject({ type: KEY, parameters: { operation: 'release' } });
	const [respond] = targets(release.name, 0);
	expect(respond.type).toBe(RESPOND);
	expect(respond.parameters).toMatchObject({
		options: {
			responseCode: 503,
			responseHeaders: {
				entries: [
					{
						name: 'Retry-After',
						value: `={{ String($('${take.name}').item.json.idempotency.slot.retryAfterSeconds) }}`,
					},
				],
			},
		},
	});
	// An item Take Slot could not handle (no customer id, the database) releases the event too.
	const [released] = targets(take.name, 2);
	expect(released).toMatchObject({ type: KEY, parameters: { operation: 'release' } });
	expect(typeOf(targets(targets(released.name, 0)[0].name, 0))).toEqual([RESPOND]);
});
