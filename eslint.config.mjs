import { configWithoutCloudSupport } from '@n8n/node-cli/eslint';

// n8n's community-node rules as @n8n/node-cli ships them, in the variant for packages that cannot run
// on n8n Cloud: this one needs `pg` at runtime, so it is for self-hosted n8n.
export default [
	{ ignores: ['dist/**', 'node_modules/**', 'test/**', 'bench/**', 'scripts/**', 'jest*.config.js', 'gulpfile.js'] },
	...configWithoutCloudSupport,
	{
		rules: {
			// `pg` is the driver this node exists to use; a Postgres claim cannot be made without it.
			'@n8n/community-nodes/no-runtime-dependencies': 'off',
		},
	},
];
