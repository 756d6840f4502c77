import js from '@eslint/js';
import { configWithoutCloudSupport } from '@n8n/node-cli/eslint';
import tseslint from 'typescript-eslint';

// The package code (nodes/, credentials/, package.json) gets n8n's community-node rules as @n8n/node-cli
// ships them, in the variant for packages that cannot run on n8n Cloud: this one needs `pg` at runtime,
// so it is for self-hosted n8n. They forbid what a node must not do (timers, process, console), which
// the harness, tests, benchmarks and scripts need: those get the recommended JavaScript and TypeScript rules only.
// package.json says "strict": false, as `n8n-node cloud-support disable` writes it: n8n's strict mode
// demands this file be exactly its default, which only a package without runtime dependencies can keep.
const PACKAGE_CODE = ['nodes/**/*.ts', 'credentials/**/*.ts'];
const TOOLING_CODE = ['harness/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'];

const isEveryTypeScriptFile = (files) => files?.length === 1 && files[0] === '**/*.ts';

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'bench/.out/**'] },
	...configWithoutCloudSupport.map((config) =>
		isEveryTypeScriptFile(config.files) ? { ...config, files: PACKAGE_CODE } : config,
	),
	{
		files: [...PACKAGE_CODE, 'package.json'],
		rules: {
			// `pg` is the driver this node exists to use; a Postgres claim cannot be made without it.
			'@n8n/community-nodes/no-runtime-dependencies': 'off',
		},
	},
	...tseslint.config({
		files: TOOLING_CODE,
		extends: [js.configs.recommended, tseslint.configs.recommended],
	}),
];
