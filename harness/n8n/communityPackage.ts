// Puts this repository's package into an n8n user folder the way Settings → Community Nodes does:
// the `npm pack` tarball is unpacked into <userFolder>/.n8n/nodes/node_modules/<name>, its dev, peer and
// optional dependencies are dropped, and `npm install --ignore-scripts` fetches the runtime ones (this package
// has none: `pg` is bundled into dist/). Testing the tarball (not the working tree) catches a missing file in
// package.json "files", such as the bundled driver.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { cleanNpmEnv } from './npmEnv';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const MAX_OUTPUT = 16 * 1024 * 1024;
const DROPPED_DEPENDENCIES = ['devDependencies', 'peerDependencies', 'optionalDependencies'];

/** `npm pack` of an already built repository; returns the tarball's absolute path. */
export async function packPackage(repoDir: string, destinationDir: string): Promise<string> {
	const manifest = JSON.parse(readFileSync(join(repoDir, 'package.json'), 'utf8')) as {
		n8n?: { nodes?: string[]; credentials?: string[] };
	};
	for (const file of [...(manifest.n8n?.nodes ?? []), ...(manifest.n8n?.credentials ?? [])]) {
		if (!existsSync(join(repoDir, file)))
			throw new Error(`${file} is missing: run \`npm run build\` first`);
	}
	mkdirSync(destinationDir, { recursive: true });
	// --ignore-scripts: the caller has built already, and prepack would build a second time.
	const { stdout } = await run(
		NPM,
		['pack', '--json', '--ignore-scripts', '--pack-destination', destinationDir],
		{ cwd: repoDir, env: cleanNpmEnv(), maxBuffer: MAX_OUTPUT },
	);
	const [{ filename }] = JSON.parse(stdout) as Array<{ filename: string }>;
	return resolve(destinationDir, filename);
}

/** Installs a packed tarball into an n8n user folder; returns the installed package's name. */
export async function installCommunityPackage(
	tarball: string,
	userFolder: string,
): Promise<string> {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	const nodeModules = join(nodesDir, 'node_modules');
	mkdirSync(nodeModules, { recursive: true });

	const { stdout: listing } = await run('tar', ['-xzOf', tarball, 'package/package.json'], {
		maxBuffer: MAX_OUTPUT,
	});
	const { name, version } = JSON.parse(listing) as { name: string; version: string };
	const packageDir = join(nodeModules, name);
	// A kept user folder (`npm run dev`) has last run's copy: no file of it may outlive this build.
	rmSync(packageDir, { recursive: true, force: true });
	mkdirSync(packageDir, { recursive: true });
	await run('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1']);

	const manifestPath = join(packageDir, 'package.json');
	const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
	const runtimeManifest = Object.fromEntries(
		Object.entries(manifest).filter(([field]) => !DROPPED_DEPENDENCIES.includes(field)),
	);
	writeFileSync(manifestPath, JSON.stringify(runtimeManifest, null, 2));
	// Same flags as n8n's installer.
	await run(
		NPM,
		[
			'install',
			'--audit=false',
			'--fund=false',
			'--bin-links=false',
			'--install-strategy=shallow',
			'--ignore-scripts=true',
			'--package-lock=false',
			'--loglevel=error',
		],
		{ cwd: packageDir, env: cleanNpmEnv(), maxBuffer: MAX_OUTPUT },
	);

	// n8n keeps a package.json listing installed community packages next to node_modules.
	writeFileSync(
		join(nodesDir, 'package.json'),
		JSON.stringify(
			{ name: 'installed-nodes', private: true, dependencies: { [name]: version } },
			null,
			2,
		),
	);
	return name;
}
