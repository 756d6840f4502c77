// A redis-server of the benchmark's own on a free port, configured as the machine's shared one (no RDB
// snapshot, no AOF), so that restarting it does not touch the Redis other runs use (queue-mode n8n on
// 6379). Restarted the hard way (SIGKILL, then started again), as a crashed or redeployed Redis is.
import { spawn, type ChildProcess } from 'node:child_process';

import { freePort } from '../../harness/freePort';
import { RespClient } from './respClient';

export class OwnRedis {
	private process: ChildProcess | undefined;

	private constructor(readonly port: number) {}

	static async start(): Promise<OwnRedis> {
		const redis = new OwnRedis(await freePort());
		await redis.up();
		return redis;
	}

	/** SIGKILL, then the same server started again: without persistence it comes back empty. */
	async restart(): Promise<void> {
		await this.down();
		await this.up();
	}

	async stop(): Promise<void> {
		await this.down();
	}

	private async up(): Promise<void> {
		const args = [
			'--bind',
			'127.0.0.1',
			'--port',
			String(this.port),
			'--save',
			'',
			'--appendonly',
			'no',
		];
		this.process = spawn('redis-server', args, { stdio: 'ignore' });
		const deadline = Date.now() + 10_000;
		for (;;) {
			try {
				const client = await RespClient.connect(this.port);
				await client.command('PING');
				client.close();
				return;
			} catch (error) {
				if (Date.now() > deadline) throw error;
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
		}
	}

	private async down(): Promise<void> {
		const child = this.process;
		this.process = undefined;
		if (!child || child.exitCode !== null) return;
		await new Promise((resolve) => {
			child.once('exit', resolve);
			child.kill('SIGKILL');
		});
	}
}
