import js from '@eslint/js';
import { configWithoutCloudSupport } from '@n8n/node-cli/eslint';
import tseslint from 'typescript-eslint';

// The package code (nodes/, credentials/, package.json) gets n8n's community-node rules as @n8n/node-cli
// ships them, no-runtime-dependencies included: package.json has no "dependencies", as the build bundles
// `pg` into dist/ (scripts/bundlePg.ts). It takes the variant for self-hosted n8n: the n8n Cloud variant also
// forbids timers and Node modules such as node:tls, which the nodes use (the pool's idle sweep, waits, the
// credential's TLS checks). Those rules forbid what a node must not do (console, for one), which the
// harness, tests, benchmarks and scripts need: those get the recommended JavaScript and TypeScript rules only.
// package.json says "strict": false, as `n8n-node cloud-support disable` writes it: n8n's strict mode
// demands this file be exactly its default, which the split above cannot keep.
const PACKAGE_CODE = ['nodes/**/*.ts', 'credentials/**/*.ts'];
const TOOLING_CODE = ['harness/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'];

const isEveryTypeScriptFile = (files) => files?.length === 1 && files[0] === '**/*.ts';

// Every error the package raises is a class of its hierarchy (nodes/shared/packageError.ts and the classes
// built on it), named for its fault; n8n's errors are made from them in one place, nodes/shared/nodeError.ts.
const PLAIN_ERROR = {
	selector: 'NewExpression[callee.name=/^(Error|TypeError|RangeError|SyntaxError)$/]',
	message:
		"Raise a class of the package's error hierarchy (nodes/Idempotency/errors.ts, nodes/shared/packageError.ts) named for the fault, not a plain Error.",
};
const N8N_ERROR = {
	selector: 'NewExpression[callee.name=/^Node(Operation|Api)Error$/]',
	message:
		"n8n's errors are made in nodes/shared/nodeError.ts only: throw the package's error and let the node's edge translate it.",
};
const ERROR_TRANSLATION = 'nodes/shared/nodeError.ts';

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'bench/.out/**'] },
	...configWithoutCloudSupport.map((config) =>
		isEveryTypeScriptFile(config.files) ? { ...config, files: PACKAGE_CODE } : config,
	),
	{
		files: PACKAGE_CODE,
		ignores: [ERROR_TRANSLATION],
		rules: { 'no-restricted-syntax': ['error', PLAIN_ERROR, N8N_ERROR] },
	},
	{ files: [ERROR_TRANSLATION], rules: { 'no-restricted-syntax': ['error', PLAIN_ERROR] } },
	...tseslint.config({
		files: TOOLING_CODE,
		extends: [js.configs.recommended, tseslint.configs.recommended],
	}),
];
