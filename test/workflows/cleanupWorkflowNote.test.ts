/**
 * The cleanup workflow's sticky note is the first thing a user reads after importing it: it must give the
 * README's reason for the retention (the longest resend, not the retry window) with the days the purge
 * really uses, and say in which time zone the schedule fires and how to change it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT as REPO } from '../../harness/repo';

interface WorkflowNode {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
}
const workflow = JSON.parse(
	readFileSync(join(REPO, 'workflows', 'cleanup-processed-events.json'), 'utf8'),
) as {
	nodes: WorkflowNode[];
	settings?: Record<string, unknown>;
};
const readme = readFileSync(join(REPO, 'README.md'), 'utf8').replace(/\s+/g, ' ');

const note = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.stickyNote')!.parameters
	.content as string;
const purge = workflow.nodes.find((node) => node.parameters.operation === 'purge')!;
const schedule = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.scheduleTrigger')!;

it('keeps keys for the days the purge uses, for the reason the README gives', () => {
	expect(purge.parameters.olderThanDays).toBe(30);
	expect(note).toContain('more than **30 days** ago');
	expect(note).toMatch(/A key must live longer than any provider may resend its event/);
	expect(note).toMatch(/15 days \(Dashboard\) or 30 days \(CLI\)/);
	expect(readme).toContain(
		'Stripe resends for up to 30 days from the CLI (15 from the Dashboard, automatic retries for 3 days), so the default is 30 days',
	);
	// The old note read the 3-day retry window as the reason keys could go.
	expect(note).not.toMatch(/stop retrying after a few days/);
});

it("says the schedule fires in the instance's time zone unless the workflow sets its own", () => {
	const [rule] = (schedule.parameters.rule as { interval: Array<{ triggerAtHour: number }> })
		.interval;
	expect(note).toContain(
		`every day at ${String(rule.triggerAtHour).padStart(2, '0')}:00 in the n8n instance's time zone`,
	);
	expect(note).toContain('GENERIC_TIMEZONE');
	expect(note).toMatch(/set \*Timezone\* in this workflow's settings/);
	// Shipped without a time zone of its own, so the note's "instance's time zone" is what happens.
	expect(workflow.settings?.timezone).toBeUndefined();
});
