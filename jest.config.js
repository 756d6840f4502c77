/**
 * `npm test`, in two projects. `pure` (descriptions, docs, faults, harness, key, release, response,
 * shared, signature, watermark, workflows) needs no shared database (the fault and harness tests start servers
 * of their own). `database` (the nodes, the store, the transport) talks to a real
 * Postgres, which its global setup starts once (TEST_DATABASE_URL, or an embedded server:
 * harness/postgres/jestGlobalSetup.ts), and only when one of its tests runs.
 */
const DATABASE_LAYERS = ['node', 'store', 'transport'];

const project = { preset: 'ts-jest', testEnvironment: 'node', testMatch: ['**/*.test.ts'] };

module.exports = {
	projects: [
		{
			...project,
			displayName: 'pure',
			roots: ['<rootDir>/test'],
			testPathIgnorePatterns: [
				'/node_modules/',
				'/test/e2e/',
				...DATABASE_LAYERS.map((l) => `/test/${l}/`),
			],
		},
		{
			...project,
			displayName: 'database',
			roots: DATABASE_LAYERS.map((layer) => `<rootDir>/test/${layer}`),
			globalSetup: '<rootDir>/harness/postgres/jestGlobalSetup.ts',
			globalTeardown: '<rootDir>/harness/postgres/jestGlobalTeardown.ts',
		},
	],
	testTimeout: 60_000,
};
