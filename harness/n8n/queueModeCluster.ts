// n8n scaled out on one machine, the way queue mode is deployed: a main process (`n8n start`: editor,
// webhook registration), workers (`n8n worker`) that run every execution, and a webhook processor
// (`n8n webhook`) that takes production webhooks and puts them on the Redis queue. All share one user
// folder (the community package installed once in its .n8n/nodes, as a shared volume gives every
// container), one encryption key, one Postgres database, and a Redis key prefix of their own.
//
//   const cluster = await QueueModeCluster.create({ packageDir, credentials, workflows, publish, databaseUrl });
//   await cluster.start();
//   await fetch(cluster.webhookUrl('path'), …);   // through the webhook processor
//   cluster.workers[0].startedExecutions();       // execution ids that worker ran, from its log
//   await cluster.workers[0].process.kill();      // SIGKILL
//   await cluster.close();
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { freePort } from '../freePort';
import { N8nInstance, type N8nInstanceOptions } from './instance';
import type { N8nProcess } from './process';

const run = promisify(execFile);

export interface QueueModeClusterOptions extends N8nInstanceOptions {
	/** n8n's own database: queue mode needs Postgres (SQLite is not supported there). */
	databaseUrl: string;
	workers?: number;
	/** Executions each worker runs at once (`n8n worker --concurrency`). */
	workerConcurrency?: number;
	redisHost?: string;
	redisPort?: number;
	/** Extra environment for the n-th worker (0-based), e.g. PGAPPNAME to tell its connections apart. */
	workerEnv?(index: number): Record<string, string>;
}

export interface QueueWorker {
	name: string;
	process: N8nProcess;
	/** Ids of the executions this worker started, from its log (n8n stores no worker id on an execution). */
	startedExecutions(): number[];
}

const WORKER_STARTED_EXECUTION = /Worker started execution (\d+)/g;

export class QueueModeCluster {
	readonly workers: QueueWorker[] = [];
	private webhookProcessor: N8nProcess | null = null;
	private webhookBaseUrl = '';

	private constructor(
		readonly main: N8nInstance,
		private readonly options: QueueModeClusterOptions,
		/** Prefix of every Redis key this cluster writes (Bull queue, pub/sub, cache). */
		readonly redisPrefix: string,
	) {}

	static async create(options: QueueModeClusterOptions): Promise<QueueModeCluster> {
		const redisHost = options.redisHost ?? '127.0.0.1';
		const redisPort = options.redisPort ?? 6379;
		await assertRedisAnswers(redisHost, redisPort);
		const redisPrefix = `idem-${randomBytes(4).toString('hex')}`;
		const main = await N8nInstance.create({
			...options,
			env: {
				EXECUTIONS_MODE: 'queue',
				QUEUE_BULL_REDIS_HOST: redisHost,
				QUEUE_BULL_REDIS_PORT: String(redisPort),
				// Both prefixes: the job queue and pub/sub, cache and locks would otherwise be shared with any
				// other n8n on this Redis (pub/sub ignores the DB index).
				QUEUE_BULL_PREFIX: `${redisPrefix}-bull`,
				N8N_REDIS_KEY_PREFIX: redisPrefix,
				...options.env,
			},
		});
		return new QueueModeCluster(main, options, redisPrefix);
	}

	/** Starts main, the workers and the webhook processor; resolves when every one is ready. */
	async start({ timeoutMs = 180_000 } = {}): Promise<void> {
		const { workers = 2, workerConcurrency = 10, workerEnv = () => ({}) } = this.options;
		await this.main.start({ timeoutMs });
		try {
			for (let index = 0; index < workers; index++) {
				const name = `worker-${index + 1}`;
				const healthPort = await freePort();
				const process = this.main.spawn(
					['worker', `--concurrency=${workerConcurrency}`],
					join(this.main.userFolder, `${name}.log`),
					{
						// On one host every default collides: N8N_PORT and the health port (5678), the task broker (5679).
						N8N_PORT: String(await freePort()),
						N8N_RUNNERS_BROKER_PORT: String(await freePort()),
						QUEUE_HEALTH_CHECK_ACTIVE: 'true',
						QUEUE_HEALTH_CHECK_PORT: String(healthPort),
						N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
						...workerEnv(index),
					},
				);
				this.workers.push({
					name,
					process,
					startedExecutions: () =>
						[...process.log().matchAll(WORKER_STARTED_EXECUTION)].map((match) => Number(match[1])),
				});
				await process.waitUntilReady(
					`http://127.0.0.1:${healthPort}/healthz/readiness`,
					timeoutMs,
					`${name} readiness`,
				);
			}
			const port = await freePort();
			this.webhookBaseUrl = `http://127.0.0.1:${port}`;
			this.webhookProcessor = this.main.spawn(
				['webhook'],
				join(this.main.userFolder, 'webhook-processor.log'),
				{ N8N_PORT: String(port) },
			);
			await this.webhookProcessor.waitUntilReady(
				`${this.webhookBaseUrl}/healthz/readiness`,
				timeoutMs,
				'webhook processor readiness',
			);
			await this.main.waitForPublishedWebhooks(
				this.webhookProcessor,
				this.webhookBaseUrl,
				timeoutMs,
			);
		} catch (error) {
			if (error instanceof Error) error.message += `\n${this.logTail(30)}`;
			await this.stop();
			throw error;
		}
	}

	/** A production webhook URL on the webhook processor (not on main). */
	webhookUrl(path: string): string {
		return `${this.webhookBaseUrl}/webhook/${path}`;
	}

	/** The last lines of every process's log, each under its name. */
	logTail(lines = 40): string {
		const parts = [
			['main', this.main.logTail(lines)],
			...this.workers.map((worker) => [worker.name, worker.process.logTail(lines)]),
			['webhook processor', this.webhookProcessor?.logTail(lines) ?? '(not started)'],
		];
		return parts.map(([name, log]) => `--- ${name} (last lines) ---\n${log}`).join('\n');
	}

	async stop(): Promise<void> {
		await this.webhookProcessor?.stop();
		await Promise.all(this.workers.map((worker) => worker.process.stop()));
		await this.main.stop();
	}

	/** Stops every process, deletes the user folder and this cluster's Redis keys. */
	async close(): Promise<void> {
		await this.stop();
		await this.main.close();
		await deleteRedisKeys(
			this.options.redisHost ?? '127.0.0.1',
			this.options.redisPort ?? 6379,
			`${this.redisPrefix}*`,
		);
	}
}

/** One PING over a plain socket, so a missing Redis is named before n8n hangs waiting for it. */
function assertRedisAnswers(host: string, port: number): Promise<void> {
	return new Promise((resolve, reject) => {
		const socket = new Socket();
		const fail = (why: string) => {
			socket.destroy();
			reject(
				new Error(
					`no Redis answers at ${host}:${port} (${why}): queue mode needs one (e.g. start redis-server)`,
				),
			);
		};
		socket.setTimeout(3_000, () => fail('timed out'));
		socket.once('error', (error) => fail(error.message));
		socket.connect(port, host, () => socket.write('PING\r\n'));
		socket.once('data', (data) => {
			socket.destroy();
			if (data.toString().startsWith('+PONG')) resolve();
			else fail(`answered ${JSON.stringify(data.toString().trim())}`);
		});
	});
}

async function deleteRedisKeys(host: string, port: number, pattern: string): Promise<void> {
	const script = "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end";
	await run('redis-cli', ['-h', host, '-p', String(port), 'EVAL', script, '0', pattern]).catch(
		() => undefined, // best effort: the keys are prefixed and harmless
	);
}
