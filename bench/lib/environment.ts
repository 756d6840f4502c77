// What the numbers were measured on: machine, versions, commit.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

import type { Pool } from 'pg';

import { REPO_ROOT } from '../../harness/repo';

export type Environment = Awaited<ReturnType<typeof describeEnvironment>>;

export async function describeEnvironment(pool: Pool) {
	const { rows } = await pool.query(
		"SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync, current_setting('shared_buffers') AS shared_buffers",
	);
	return {
		cpu: cpus()[0]?.model ?? 'unknown',
		cores: cpus().length,
		memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
		loadAtStart: loadavg()
			.map((value) => value.toFixed(2))
			.join(' '),
		node: process.version,
		postgres: `${rows[0].version} (fsync ${rows[0].fsync}, synchronous_commit ${rows[0].sync}, shared_buffers ${rows[0].shared_buffers})`,
		pg: packageVersion('node_modules/pg/package.json'),
		commit: gitCommit(),
	};
}

function packageVersion(relative: string): string {
	const path = join(REPO_ROOT, relative);
	return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')).version : 'not installed';
}

function gitCommit(): string {
	const git = (...args: string[]) =>
		execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
	try {
		const commit = git('rev-parse', '--short', 'HEAD');
		const dirty = git('status', '--porcelain', '--untracked-files=no');
		return dirty ? `${commit} + uncommitted changes` : commit;
	} catch {
		return 'unknown (not a git checkout)';
	}
}
