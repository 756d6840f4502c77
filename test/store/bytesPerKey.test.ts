/**
 * What a key costs on disk: table + indexes (pg_total_relation_size) per million Stripe-like `evt:` keys,
 * with every column the node creates, claimed by the node's own statements. And rows written before the
 * claim ID got shorter (a 36-character UUID) still settle.
 */
import { createHash, randomUUID } from 'node:crypto';

import { newClaimToken } from '../../nodes/Idempotency/actions/claimToken';
import { claimBatch } from '../../nodes/Idempotency/store/claimBatch';
import type { ClaimOptions } from '../../nodes/Idempotency/store/claimOutcome';
import { completeKeys, releaseKeys } from '../../nodes/Idempotency/store/settleKeys';
import { closeAllPools } from '../../nodes/Idempotency/transport/poolRegistry';
import { freshClaimTable, type TestClaimTable } from '../support/claimTable';

afterAll(closeAllPools);

const KEYS = 40_000;
const BATCH = 100;
/** Completing a claim writes a new row version; autovacuum frees the old ones for reuse while claims go on. */
const VACUUM_EVERY_KEYS = 2_000;
const MiB = 1024 * 1024;

/** A Stripe event id: `evt_` and 24 characters. */
const stripeKey = (i: number) =>
	`evt:evt_${createHash('sha1').update(String(i)).digest('base64url').slice(0, 24)}`;

/**
 * Claims KEYS keys in batches, as executions of BATCH items would, completing each leased batch the way
 * the template's Complete step does, with VACUUM running along as autovacuum would (without it the old
 * row versions of 40,000 Completes nearly double the table: ~345 MiB per million measured).
 */
async function mibPerMillionKeys(
	table: TestClaimTable,
	mode: ClaimOptions['mode'],
	token: () => string,
): Promise<number> {
	for (let start = 0; start < KEYS; start += BATCH) {
		const keys = Array.from({ length: BATCH }, (_, i) => stripeKey(start + i));
		const claimToken = token();
		const outcomes = await table.claim(keys, { mode, token: claimToken, leaseSeconds: 300 });
		expect(outcomes.filter((outcome) => !outcome.won)).toEqual([]);
		if (mode === 'lease')
			await completeKeys(
				table,
				keys.map((key) => ({ key, claimToken })),
			);
		if ((start + BATCH) % VACUUM_EVERY_KEYS === 0)
			await table.pool.query(`VACUUM ${table.ref.qualified}`);
	}
	await table.pool.query(`VACUUM ${table.ref.qualified}`);
	const { rows } = await table.pool.query<{ bytes: string }>(
		'SELECT pg_total_relation_size($1::regclass) AS bytes',
		[table.ref.qualified],
	);
	return Number(rows[0].bytes) / MiB / (KEYS / 1_000_000);
}

describe('bytes per key', () => {
	it('claim once: a 16-character claim ID makes a table smaller than a UUID did, side by side', async () => {
		const short = await mibPerMillionKeys(await freshClaimTable(), 'once', newClaimToken);
		const uuid = await mibPerMillionKeys(await freshClaimTable(), 'once', randomUUID);
		process.stdout.write(
			`claim once, MiB per million evt: keys: ${short.toFixed(1)} (16-char claim ID), ${uuid.toFixed(1)} (UUID)\n`,
		);
		expect(short).toBeLessThan(uuid * 0.92);
		expect(short).toBeLessThanOrEqual(195);
	});

	it('claim with lease, completed: the row keeps no claim ID', async () => {
		const perMillion = await mibPerMillionKeys(await freshClaimTable(), 'lease', newClaimToken);
		process.stdout.write(`lease + Complete, MiB per million evt: keys: ${perMillion.toFixed(1)}\n`);
		expect(perMillion).toBeLessThanOrEqual(200);
	});
});

describe('rows claimed with a UUID claim ID, before the claim ID got shorter', () => {
	it('complete, release and are taken over as before', async () => {
		const table = await freshClaimTable();
		const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
		await table.pool.query(
			`INSERT INTO ${table.ref.qualified} (key, first_seen, last_seen, status, lease_until, claim_token) VALUES
			 ('old:complete', now(), now(), 'processing', now() + interval '1 hour', $1),
			 ('old:release', now(), now(), 'processing', now() + interval '1 hour', $2),
			 ('old:expired', now() - interval '1 hour', now() - interval '1 hour', 'processing', now() - interval '1 minute', $3)`,
			[a, b, c],
		);
		expect(await completeKeys(table, [{ key: 'old:complete', claimToken: a }])).toEqual([true]);
		expect(await releaseKeys(table, [{ key: 'old:release', claimToken: b }])).toEqual([true]);
		const token = newClaimToken();
		const [takeover] = await claimBatch(table, [{ key: 'old:expired', fingerprint: null }], {
			mode: 'lease',
			leaseSeconds: 60,
			countRepeats: true,
			token,
		});
		expect(takeover).toMatchObject({ won: true, reclaimed: true, claimToken: token });
		expect(await completeKeys(table, [{ key: 'old:expired', claimToken: c }])).toEqual([false]);
		expect(await completeKeys(table, [{ key: 'old:expired', claimToken: token }])).toEqual([true]);
		const { rows } = await table.pool.query(
			`SELECT key, status, claim_token FROM ${table.ref.qualified} ORDER BY key`,
		);
		expect(rows).toEqual([
			{ key: 'old:complete', status: 'completed', claim_token: null },
			{ key: 'old:expired', status: 'completed', claim_token: null },
		]);
	});
});
