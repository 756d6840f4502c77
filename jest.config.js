/** Unit and integration tests: every one talks to a real Postgres (see test/support/postgres.ts). */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	testPathIgnorePatterns: ['/node_modules/', '/test/e2e/'],
	globalSetup: '<rootDir>/test/support/globalSetup.ts',
	globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
	testTimeout: 60_000,
};
