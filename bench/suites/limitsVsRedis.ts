// Check Rate against the Redis recipes users run today for a rate per key: a fixed window (INCR, then
// EXPIRE on the first hit) and a sliding window in Lua (EVAL: ZREMRANGEBYSCORE, ZCARD, ZADD on the
// server's TIME). Two questions:
// - Speed, under the same load: one decision at a time, the same 100 keys in turn, R = 50 per 10 s, in
//   rotated rounds. Check Rate is a one-item execution of the built node (n8n's per-item work included);
//   the Redis recipes are bare round trips from this process (what an n8n Redis node adds is not counted).
// - What a restart costs: R = 50 per 60 s on one key, the limit used up, the store killed (SIGKILL) and
//   started again within the window, then 100 more attempts: how many start past the limit. Redis runs as
//   the machine's does (no RDB, no AOF), on a port of its own (the shared 6379 is never restarted); Postgres
//   is a server of the benchmark's own, killed and recovered (harness/postgres/server.ts).
import type { INodeExecutionData } from 'n8n-workflow';

import { credentialsFromUrl } from '../../harness/postgres/connections';
import { OwnPostgres } from '../../harness/postgres/server';
import { ratioRow, reportedRow, type Benchmark } from '../lib/benchmark';
import { nodeRunner } from '../lib/nodeClaims';
import { OwnRedis } from '../lib/ownRedis';
import { RespClient } from '../lib/respClient';
import { rotatedRounds } from '../lib/rounds';
import { elapsedMs, formatMs, median } from '../lib/stats';

const TABLE = 'bench_rate_claims';
const CUSTOMERS = 100;

/** Allowed iff fewer than R starts of the key in the last W ms, by the server's clock. */
const SLIDING_WINDOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
	redis.call('ZADD', KEYS[1], now, ARGV[3])
	redis.call('PEXPIRE', KEYS[1], window)
	return 1
end
return 0`;

type Decide = (key: string, maxStarts: number, windowSeconds: number) => Promise<boolean>;
type Side = 'Check Rate' | 'INCR + EXPIRE' | 'Lua sliding window';
const SIDES: Side[] = ['Check Rate', 'INCR + EXPIRE', 'Lua sliding window'];

const sizes = (quick: boolean) => (quick ? { rounds: 6, block: 30 } : { rounds: 20, block: 200 });

export const title =
	'1i. Check Rate against Redis rate recipes: speed, and starts past the limit across a restart';
export const run: Benchmark = async ({ dist, credentials, pool, quick, check, log }) => {
	let attempt = 0;
	const checkRateOn = (on: typeof credentials): Decide => {
		const limitNode = nodeRunner(dist, 'IdempotencyLimit', on, TABLE);
		return async (key, maxStarts, windowSeconds) => {
			const items: INodeExecutionData[] = [{ json: { key } }];
			const [allowed] = await limitNode(
				items,
				{ operation: 'checkRate', maxStarts, windowSeconds },
				(name) => (name === 'limitKey' ? key : undefined),
			);
			return allowed.length === 1;
		};
	};
	const recipesOn = (redis: RespClient): Record<Exclude<Side, 'Check Rate'>, Decide> => ({
		'INCR + EXPIRE': async (key, maxStarts, windowSeconds) => {
			const bucket = `fixed:${key}:${Math.floor(Date.now() / 1000 / windowSeconds)}`;
			const count = (await redis.command('INCR', bucket)) as number;
			if (count === 1) await redis.command('EXPIRE', bucket, windowSeconds);
			return count <= maxStarts;
		},
		'Lua sliding window': async (key, maxStarts, windowSeconds) =>
			(await redis.command(
				'EVAL',
				SLIDING_WINDOW_LUA,
				1,
				`sliding:${key}`,
				windowSeconds * 1000,
				maxStarts,
				`a${attempt++}`,
			)) === 1,
	});

	const redis = await OwnRedis.start();
	const postgres = await OwnPostgres.start();
	log(`own Redis on port ${redis.port}, own Postgres on port ${postgres.port}`);
	try {
		// Speed: the benchmark's own Postgres and the machine's kind of Redis (this run's own).
		const speedRedis = await RespClient.connect(redis.port);
		const decide: Record<Side, Decide> = {
			'Check Rate': checkRateOn(credentials),
			...recipesOn(speedRedis),
		};
		let next = 0;
		const { rounds, block } = sizes(quick);
		for (const side of SIDES) await decide[side]('warm', 50, 10);
		const perRound = await rotatedRounds(rounds, SIDES, async (side) => {
			const started = process.hrtime.bigint();
			for (let i = 0; i < block; i++) await decide[side](`cus_${next++ % CUSTOMERS}`, 50, 10);
			return elapsedMs(started) / block;
		});
		const perSide = SIDES.map((_, index) => median(perRound.map((round) => round[index])));
		speedRedis.close();
		for (const suffix of ['', '_slots', '_rates'])
			await pool.query(`DROP TABLE IF EXISTS ${TABLE}${suffix}`);

		log('speed measured; now the restarts');
		// A restart within the window.
		const pastLimit: Record<Side, number> = {
			'Check Rate': 0,
			'INCR + EXPIRE': 0,
			'Lua sliding window': 0,
		};
		// Each Redis recipe on a connection of its own, made again after the restart (the old one is gone).
		let redisClient = await RespClient.connect(redis.port);
		const sides: Array<[Side, () => Decide, () => Promise<void>]> = [
			['Check Rate', () => checkRateOn(credentialsFromUrl(postgres.url)), () => postgres.kill()],
			...(['INCR + EXPIRE', 'Lua sliding window'] as const).map(
				(side): [Side, () => Decide, () => Promise<void>] => [
					side,
					() => recipesOn(redisClient)[side],
					async () => {
						await redis.restart();
						redisClient.close();
						redisClient = await RespClient.connect(redis.port);
					},
				],
			),
		];
		for (const [side, decider, restart] of sides) {
			const key = `restart-${side}`;
			let before = 0;
			for (let i = 0; i < 60; i++) if (await decider()(key, 50, 60)) before++;
			check(before === 50, `rate bench: ${side} lets exactly 50 of 60 through before the restart`);
			log(`${side}: ${before} of 60 allowed; restarting its store`);
			await restart();
			const decide = decider();
			for (let i = 0; i < 100; i++) {
				try {
					if (await decide(key, 50, 60)) pastLimit[side]++;
				} catch (error) {
					log(`rate bench: ${side} after the restart: ${(error as Error).message}`);
				}
			}
		}
		redisClient.close();
		check(
			pastLimit['Check Rate'] === 0,
			'rate bench: Check Rate lets nothing past the limit across a restart',
		);

		return {
			rows: [
				ratioRow(
					'one decision: Check Rate (1-item execution) ÷ INCR + EXPIRE (fixed window, bare round trips)',
					perSide[0] / perSide[1],
				),
				ratioRow(
					'one decision: Check Rate (1-item execution) ÷ Lua sliding window (EVAL, bare round trip)',
					perSide[0] / perSide[2],
				),
				reportedRow(
					'time per decision, each side',
					SIDES.map((side, index) => `${side} ${formatMs(perSide[index])}`).join('; '),
				),
				reportedRow(
					'starts past R = 50 per 60 s after a restart of the store within the window (100 attempts)',
					SIDES.map((side) => `${side} ${pastLimit[side]}`).join('; '),
				),
			],
		};
	} finally {
		await redis.stop();
		await postgres.stop();
	}
};
