/**
 * workflows/chat-burst-template.json, as a user imports it: the webhook feeds Collect, which answers once
 * the message is stored and keeps redeliveries out; the burst and a flushed burst take the same path to
 * the work, which ends in Complete, or in Release when it failed. Running it is test/e2e/bursts's job.
 */
import { readShippedWorkflow } from '../support/shippedWorkflowFile';

const workflow = readShippedWorkflow('chat-burst-template.json');
const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
const targets = (from: string, output: number) =>
	(workflow.connections[from]?.main[output] ?? []).map((target) => byName.get(target.node)!);
const BURST = 'n8n-nodes-idempotency.idempotencyBurst';
const burstNode = (operation: string) =>
	workflow.nodes.find((node) => node.type === BURST && node.parameters.operation === operation)!;

it('the webhook (answered by a node) feeds Collect, which answers once stored and keeps redeliveries out', () => {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook')!;
	expect(webhook.parameters).toMatchObject({ httpMethod: 'POST', responseMode: 'responseNode' });
	const collect = burstNode('collect');
	expect(targets(webhook.name, 0)).toEqual([collect]);
	expect(collect.parameters).toMatchObject({
		burstKey: '={{ $json.body.message.chat.id }}',
		edge: 'trailing',
		options: { answerWhenStored: true, itemId: '={{ $json.body.update_id }}' },
	});
	// A message that cannot be collected is answered with an error, so the sender retries or gives up.
	expect(collect.onError).toBe('continueErrorOutput');
	expect(targets(collect.name, 2).map((node) => node.type)).toEqual([
		'n8n-nodes-base.respondToWebhook',
	]);
	expect(targets(collect.name, 1).map((node) => node.type)).toEqual(['n8n-nodes-base.noOp']);
});

it('a collected burst and a flushed one take the same path to the work, then Complete, or Release on failure', () => {
	const collect = burstNode('collect');
	const flush = burstNode('flush');
	const schedule = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.scheduleTrigger')!;
	expect(targets(schedule.name, 0)).toEqual([flush]);
	const [prompt] = targets(collect.name, 0);
	expect(targets(flush.name, 0)).toEqual([prompt]);
	const [work] = targets(prompt.name, 0);
	expect(work.onError).toBe('continueErrorOutput');
	// One query per burst: a flush outputs several bursts, and Complete reads each one's paired item
	// (one query for all would pair every output with every burst: "Multiple matches found").
	expect(work.parameters.options).toMatchObject({ queryBatching: 'independently' });
	expect(targets(work.name, 0)).toEqual([burstNode('complete')]);
	expect(targets(work.name, 1)).toEqual([burstNode('release')]);
	for (const settle of [burstNode('complete'), burstNode('release')])
		expect(settle.parameters).toMatchObject({
			burstId: "={{ $('One Prompt').item.json.burstId }}",
			claimId: "={{ $('One Prompt').item.json.claimId }}",
		});
	// The lease the flush gives a taken-over burst is the one Collect gives its own.
	expect(flush.parameters.leaseSeconds).toBe(collect.parameters.leaseSeconds);
});
