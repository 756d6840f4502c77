/**
 * End-to-end tests: the packed package in a real n8n (see harness/stack.ts). Slow; run with
 * `npm run test:e2e`.
 */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.e2e.test.ts'],
	// One n8n at a time, in jest's own process (which then stops it on exit or interrupt): the machine
	// has two cores and n8n's main process is the bottleneck.
	maxWorkers: 1,
	// A cold cache installs Node 24 and n8n first (minutes, see the README); beforeAll sets its own, longer limit.
	testTimeout: 120_000,
};
