// Child process of memory.ts: claims many keys through the built node (100 items per execution, a few
// executions at a time) and prints one JSON line with RSS/heap samples and the pool registry's pool count.
// Run with --expose-gc so samples are taken after a full collection.
import { credentialsFromUrl } from '../../harness/postgres/connections';
import { loadDist } from './dist';
import { freshIds, nodeClaimer } from './nodeClaims';

const PER_EXECUTION = 100;
const IN_FLIGHT = 4;

export interface MemoryReport {
	samples: Array<{ claims: number; rss: number; heapUsed: number; pools: number }>;
	poolCounts: number[];
	/** Executions that did not route every fresh key to New. */
	wrong: number;
	seconds: number;
}

async function main(): Promise<void> {
	const [url, totalArg, warmupArg] = process.argv.slice(2);
	const total = Number(totalArg);
	const warmup = Number(warmupArg);
	const dist = loadDist();
	const claimer = nodeClaimer(dist, credentialsFromUrl(url), 'bench_memory');
	const samples: MemoryReport['samples'] = [];
	const poolCounts = new Set<number>();
	let wrong = 0;

	const sample = (claims: number) => {
		(globalThis as unknown as { gc: () => void }).gc();
		const { rss, heapUsed } = process.memoryUsage();
		samples.push({ claims, rss, heapUsed, pools: dist.poolRegistry.openPoolCount() });
	};
	const claim = async (count: number) => {
		let left = count / PER_EXECUTION;
		const worker = async () => {
			while (left-- > 0) {
				const [created] = await claimer.run(claimer.prepare(freshIds(PER_EXECUTION)));
				if (created.length !== PER_EXECUTION) wrong++;
				poolCounts.add(dist.poolRegistry.openPoolCount());
			}
		};
		await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
	};

	const started = Date.now();
	await claim(warmup);
	sample(warmup);
	const steps = 4;
	for (let step = 1; step <= steps; step++) {
		await claim((total - warmup) / steps);
		sample(warmup + ((total - warmup) * step) / steps);
	}
	const seconds = (Date.now() - started) / 1000;
	await dist.poolRegistry.closeAllPools();
	const report: MemoryReport = { samples, poolCounts: [...poolCounts], wrong, seconds };
	process.stdout.write(`${JSON.stringify(report)}\n`);
}

void main();
