/**
 * The Stripe and GitHub templates in a real n8n 2.x: the packed package installed as a community package,
 * the templates imported and published as shipped, signing secrets in this package's credential. Genuine
 * deliveries are processed once; forged ones are answered 401 and leave no row in the claim table, so the
 * genuine delivery that follows is still processed.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

import { githubHeader, stripeHeader } from '../support/signers';
import { answered, deliver, refusedSignature } from '../support/deliver';
import { appWithN8nForSuite } from '../support/n8n/appWithN8nForSuite';
import type { CredentialEntry } from '../support/n8n/credentials';
import type { N8nExecutions } from '../support/n8n/executions';
import { explainedByN8nLog, type N8nInstance } from '../support/n8n/instance';
import {
	businessRowsPerKey,
	claimRows,
	loadShippedWorkflow,
	webhookPathOf,
	type WorkflowJson,
} from '../support/workflows';

const N8N_SCHEMA = 'n8n_e2e';
const BUSINESS_STEP = 'Insert into business_log (example)';
const CLAIM = 'Idempotency Claim';
const STRIPE_SECRET = `whsec_${randomBytes(18).toString('base64url')}`;
const GITHUB_SECRET = randomBytes(20).toString('hex');

const STRIPE_CREDENTIAL = signingCredential(
	'sigE2eStripeSec1',
	'Stripe signing secret',
	STRIPE_SECRET,
);
const GITHUB_CREDENTIAL = signingCredential(
	'sigE2eGithubSec1',
	'GitHub webhook secret',
	GITHUB_SECRET,
);
const stripeTemplate = templateSignedWith('stripe-template.json', STRIPE_CREDENTIAL);
const githubTemplate = templateSignedWith('github-template.json', GITHUB_CREDENTIAL);

let pool: Pool;
let n8n: N8nInstance | undefined;
let executions: N8nExecutions;

appWithN8nForSuite(
	{
		prefix: 'sig_e2e',
		n8nSchema: N8N_SCHEMA,
		extraCredentials: [STRIPE_CREDENTIAL, GITHUB_CREDENTIAL],
		workflows: [stripeTemplate, githubTemplate],
		publish: [stripeTemplate.id, githubTemplate.id],
	},
	(started) => ({ pool, n8n, executions } = started),
);

const now = () => Math.floor(Date.now() / 1000);

describe('Stripe template', () => {
	const url = () => n8n!.webhookUrl(webhookPathOf(stripeTemplate));
	const tag = randomBytes(3).toString('hex');
	const event = (name: string) =>
		JSON.stringify({
			id: `evt_${tag}_${name}`,
			object: 'event',
			type: 'invoice.paid',
			data: { object: { amount: 1200 } },
		});
	const signed = (body: string, t = now(), secret = STRIPE_SECRET) => ({
		'stripe-signature': stripeHeader(secret, t, body),
	});

	step(
		'a signed delivery is processed once; its redelivery (new timestamp, new signature) is a duplicate',
		async () => {
			const since = await executions.lastId();
			const body = event('A');
			const key = `evt:evt_${tag}_A`;
			const first = await deliver(url(), body, signed(body));
			const redelivery = await deliver(url(), body, signed(body, now() + 1));
			// The very same request again, inside the tolerance window: the signature passes, the claim stops it.
			const replayed = signed(body);
			await deliver(url(), body, replayed);
			const replay = await deliver(url(), body, replayed);

			expect(first).toEqual(answered('processed', key));
			expect(redelivery).toEqual(answered('duplicate', key));
			expect(replay).toEqual(answered('duplicate', key));
			const runs = await executions.waitForFinished(stripeTemplate.id, since, 4);
			expect(runs.filter((run) => run.nodesRun.includes(BUSINESS_STEP))).toHaveLength(1);
			expect(await businessRowsPerKey(pool, [key])).toEqual({ [key]: 1 });
		},
	);

	step(
		'forged deliveries of a real event id are answered 401 and claim nothing; the genuine one that follows is processed',
		async () => {
			const since = await executions.lastId();
			const body = event('B');
			const key = `evt:evt_${tag}_B`;
			const otherBody = event('other');
			const forgeries: Array<[string, Record<string, string>, string]> = [
				['signed with another secret', signed(body, now(), 'whsec_attacker'), 'signature_mismatch'],
				['a genuine signature of another event', signed(otherBody), 'signature_mismatch'],
				[
					'a genuinely signed request replayed ten minutes later',
					signed(body, now() - 600),
					'stale_timestamp',
				],
				['a signature dated ten minutes ahead', signed(body, now() + 600), 'future_timestamp'],
				['no signature at all', {}, 'missing_header'],
			];
			for (const [label, headers, reason] of forgeries) {
				const answer = await deliver(url(), body, headers);
				expect({ label, ...answer }).toEqual({ label, ...refusedSignature(reason) });
			}
			expect(await claimRows(pool, key)).toBe(0);
			const forged = await executions.waitForFinished(stripeTemplate.id, since, forgeries.length);
			for (const run of forged) expect(run.nodesRun).not.toContain(CLAIM);

			const genuine = await deliver(url(), body, signed(body));
			expect(genuine).toEqual(answered('processed', key));
			expect(await claimRows(pool, key)).toBe(1);
			expect(await businessRowsPerKey(pool, [key])).toEqual({ [key]: 1 });
		},
	);
});

describe('GitHub template', () => {
	const url = () => n8n!.webhookUrl(webhookPathOf(githubTemplate));
	const push = (ref: string) =>
		JSON.stringify({
			ref,
			before: '0000',
			after: randomBytes(20).toString('hex'),
			repository: { full_name: 'octo/repo' },
		});
	const headers = (delivery: string, body: string, secret = GITHUB_SECRET) => ({
		'x-github-event': 'push',
		'x-github-delivery': delivery,
		'x-hub-signature-256': githubHeader(secret, body),
	});

	step(
		'a signed delivery is processed once; its redelivery (same X-GitHub-Delivery) is a duplicate',
		async () => {
			const delivery = randomUUID();
			const key = `evt:${delivery}`;
			const body = push('refs/heads/main');
			const first = await deliver(url(), body, headers(delivery, body));
			const redelivery = await deliver(url(), body, headers(delivery, body));
			expect(first).toEqual(answered('processed', key));
			expect(redelivery).toEqual(answered('duplicate', key));
			expect(await businessRowsPerKey(pool, [key])).toEqual({ [key]: 1 });
		},
	);

	step(
		'a real delivery id with a wrong signature, or a changed body, is answered 401 and claims nothing',
		async () => {
			const delivery = randomUUID();
			const key = `evt:${delivery}`;
			const body = push('refs/heads/release');
			const tampered = body.replace('release', 'rele4se');
			const wrongSecret = await deliver(url(), body, headers(delivery, body, 'not-the-secret'));
			const changedBody = await deliver(url(), tampered, headers(delivery, body));
			expect(wrongSecret).toEqual(refusedSignature('signature_mismatch'));
			expect(changedBody).toEqual(refusedSignature('signature_mismatch'));
			expect(await claimRows(pool, key)).toBe(0);

			const genuine = await deliver(url(), body, headers(delivery, body));
			expect(genuine).toEqual(answered('processed', key));
			expect(await businessRowsPerKey(pool, [key])).toEqual({ [key]: 1 });
		},
	);
});

step("no signing secret is written into n8n's execution records", async () => {
	const { rows } = await pool.query(
		`SELECT count(*)::int AS n FROM ${N8N_SCHEMA}.execution_data WHERE data LIKE $1 OR data LIKE $2`,
		[`%${STRIPE_SECRET}%`, `%${GITHUB_SECRET}%`],
	);
	const { rows: all } = await pool.query(
		`SELECT count(*)::int AS n FROM ${N8N_SCHEMA}.execution_data`,
	);
	expect(all[0].n).toBeGreaterThan(10);
	expect(rows[0].n).toBe(0);
});

/** A test whose failure message ends with n8n's log tail. */
function step(name: string, body: () => Promise<void>): void {
	it(name, () => explainedByN8nLog(n8n, body));
}

/** This package's signing-secret credential, for `n8n import:credentials`. */
function signingCredential(id: string, name: string, secret: string): CredentialEntry {
	return { id, name, type: 'idempotencyWebhookSigningApi', data: { secret } };
}

/**
 * n8n 2.41's importer looks up a credential given as { name } (no id) by an undefined id, which matches the
 * first credential of its type: with two signing secrets in one instance, each template is pointed at its
 * own by id here (what picking the credential in the editor does). The shipped files carry no ids.
 */
function templateSignedWith(file: string, credential: CredentialEntry): WorkflowJson {
	const workflow = loadShippedWorkflow(file);
	for (const node of workflow.nodes as Array<{
		credentials?: Record<string, { id?: string; name: string }>;
	}>) {
		const signing = node.credentials?.idempotencyWebhookSigningApi;
		if (signing) signing.id = credential.id;
	}
	return workflow;
}
