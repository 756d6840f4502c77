/**
 * workflows/limited-webhook-template.json, as a user imports it: the claim comes first, so a duplicate
 * never reaches the limit; Got Slot runs Write and Complete (the business write and the Complete in one
 * transaction), then frees its slot whether it wrote or failed; No Slot releases the event and answers 503
 * with the seconds Take Slot gave as Retry-After.
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

it("Got Slot runs Write and Complete: the business write and the claim's Complete in one transaction, as the node template does", () => {
	const [step] = targets(take.name, 0);
	const nodeTemplate = readShippedWorkflow('idempotency-claim-template.json');
	const shape = ({ type, onError, parameters }: ShippedNode) => ({
		type,
		onError,
		parameters: Object.keys(parameters).sort(),
	});
	const example = nodeTemplate.nodes.find(
		(node) => node.parameters.operation === 'completeWithWrite',
	)!;
	expect(shape(step)).toEqual(shape(example));
	expect(step.parameters).toMatchObject({
		operation: 'completeWithWrite',
		query: example.parameters.query,
		// Take Slot's item is the claim's, its slot added: the Key and Claim ID are left at their defaults
		// ($json.idempotency.key / .claimId), as in the node template.
		queryParameters: "={{ [ $json.idempotency.key, 'customer:' + $json.body.customerId ] }}",
	});
	// Nothing else writes the business row or completes the claim.
	expect(
		workflow.nodes.filter(
			(node) => node.type === 'n8n-nodes-base.postgres' || node.parameters.operation === 'complete',
		),
	).toEqual([]);
});

it('frees the slot after Write and Complete, whether it wrote or failed (not_held included), then answers 200 or releases and answers 500', () => {
	const [step] = targets(take.name, 0);
	for (const [output, settle, answer] of [
		[0, undefined, 200],
		[1, 'release', 500],
	] as const) {
		const [free] = targets(step.name, output);
		expect(free.type).toBe(LIMIT);
		expect(free.parameters).toMatchObject({
			operation: 'freeSlot',
			slotId: `={{ $('${take.name}').item.json.idempotency.slot.slotId }}`,
		});
		// A Free Slot that fails still lets the done work be answered: the slot's lease frees it.
		expect(free.onError).toBe('continueRegularOutput');
		let [next] = targets(free.name, 0);
		if (settle) {
			// Release with the claim's own Claim ID: a claim taken over meanwhile (not_held) is left to its holder.
			expect(next).toMatchObject({
				type: KEY,
				parameters: {
					operation: settle,
					claimId: "={{ $('Claim Event').item.json.idempotency.claimId }}",
				},
			});
			[next] = targets(next.name, 0);
		}
		expect(next.type).toBe(RESPOND);
		expect(next.parameters).toMatchObject({ options: { responseCode: answer } });
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
