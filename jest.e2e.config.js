/**
 * End-to-end tests: the packed package in a real n8n (see harness/stack.ts). Slow; run with
 * `npm run test:e2e`, which builds first. Beside them, `bundled pg` runs the TLS and transaction-pooler tests
 * of `npm test` again on the driver the package ships (dist/node_modules/pg.js, scripts/bundlePg.ts) instead
 * of node_modules/pg: what a bundle could break (TLS, certificates, the wire protocol) is tried on the bundle.
 */
const unit = require('./jest.config');

const project = { preset: 'ts-jest', testEnvironment: 'node' };
const databaseProject = unit.projects.find((candidate) => candidate.displayName === 'database');

module.exports = {
	projects: [
		{
			...project,
			displayName: 'e2e',
			roots: ['<rootDir>/test/e2e'],
			testMatch: ['**/*.e2e.test.ts'],
		},
		{
			...databaseProject,
			displayName: 'bundled pg',
			testMatch: [
				'**/test/transport/tls.test.ts',
				'**/test/store/statements/transactionPooler.test.ts',
			],
			moduleNameMapper: { '^pg$': '<rootDir>/dist/node_modules/pg.js' },
		},
	],
	// One n8n at a time, in jest's own process (which then stops it on exit or interrupt): the machine
	// has two cores and n8n's main process is the bottleneck.
	maxWorkers: 1,
	// A cold cache installs Node 24 and n8n first (minutes, see the README); beforeAll sets its own, longer limit.
	testTimeout: 120_000,
};
