/**
 * The GitHub Actions workflows that check and publish the package. n8n takes a community node only when it
 * was published from GitHub Actions with an npm provenance statement, so these files are part of what is
 * shipped: they must parse, publish only from a version tag, and never publish what was not built and tested.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

interface Step {
	name?: string;
	run?: string;
	uses?: string;
}
interface Job {
	permissions?: Record<string, string>;
	steps: Step[];
}
interface Workflow {
	on: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs: Record<string, Job>;
}

const workflowsDir = join(__dirname, '..', '..', '.github', 'workflows');
const load = (file: string): Workflow => parse(readFileSync(join(workflowsDir, file), 'utf8'));

/** The index of the first step whose command line is exactly `command` (-1 when none is). */
const stepRunning = (job: Job, command: string): number =>
	job.steps.findIndex((step) =>
		(step.run ?? '')
			.split('\n')
			.map((line) => line.trim())
			.includes(command),
	);

describe('the publish workflow', () => {
	const workflow = load('publish.yml');
	const jobs = Object.values(workflow.jobs);
	const publishing = jobs.filter((job) =>
		job.steps.some((step) => /npm publish/.test(step.run ?? '')),
	);

	it('runs only when a version tag is pushed, never for a branch or a pull request', () => {
		expect(workflow.on).toEqual({ push: { tags: ['v*'] } });
	});

	it('has one job that publishes, with provenance and public access', () => {
		expect(publishing).toHaveLength(1);
		expect(stepRunning(publishing[0], 'npm publish --provenance --access public')).toBeGreaterThan(
			-1,
		);
	});

	it('lets that job mint the OIDC token provenance is signed with, and read the repository only', () => {
		expect(publishing[0].permissions).toEqual({ 'id-token': 'write', contents: 'read' });
		expect(workflow.permissions).toEqual({ contents: 'read' });
	});

	it('installs, builds and runs the tests before the publish step', () => {
		const [job] = publishing;
		const publish = stepRunning(job, 'npm publish --provenance --access public');
		const order = ['npm ci', 'npm run build', 'npm test'].map((command) =>
			stepRunning(job, command),
		);
		expect(order.every((index) => index > -1)).toBe(true);
		expect([...order].sort((a, b) => a - b)).toEqual(order);
		expect(order[order.length - 1]).toBeLessThan(publish);
	});
});

describe('the CI workflow', () => {
	const workflow = load('ci.yml');
	const [job] = Object.values(workflow.jobs);

	it('runs for pushes and pull requests, and publishes nothing', () => {
		expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
		for (const each of Object.values(workflow.jobs))
			expect(each.steps.some((step) => /npm publish/.test(step.run ?? ''))).toBe(false);
	});

	it("runs the README's test command after a clean install, with the format check, lint, type check and build", () => {
		const order = [
			'npm ci',
			'npm run format:check',
			'npm run lint',
			'npm run typecheck',
			'npm run build',
			'npm test',
		].map((command) => stepRunning(job, command));
		expect(order.every((index) => index > -1)).toBe(true);
		expect(order[0]).toBe(Math.min(...order));
	});
});
