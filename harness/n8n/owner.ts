// An owner account set through n8n's environment (N8N_INSTANCE_OWNER_*), so the editor opens on the
// sign-in page instead of the first-run setup screen. Used by `npm run dev`, the picture script and the
// browser test.
import { createRequire } from 'node:module';
import { join } from 'node:path';

import type { Runtime } from './runtime';

export const OWNER = {
	email: 'dev@example.com',
	password: 'Idempotency-dev-1',
	firstName: 'Dev',
	lastName: 'User',
};

export function ownerEnv(runtime: Runtime): Record<string, string> {
	// n8n's own copy of bcryptjs, so the hash is one n8n accepts.
	const bcrypt = createRequire(join(runtime.n8nDir, 'package.json'))('bcryptjs') as {
		hashSync(password: string, rounds: number): string;
	};
	return {
		N8N_INSTANCE_OWNER_MANAGED_BY_ENV: 'true',
		N8N_INSTANCE_OWNER_EMAIL: OWNER.email,
		N8N_INSTANCE_OWNER_FIRST_NAME: OWNER.firstName,
		N8N_INSTANCE_OWNER_LAST_NAME: OWNER.lastName,
		N8N_INSTANCE_OWNER_PASSWORD_HASH: bcrypt.hashSync(OWNER.password, 10),
	};
}
