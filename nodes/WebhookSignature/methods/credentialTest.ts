import type {
	ICredentialTestFunctions,
	ICredentialsDecrypted,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { secretsProblem } from '../signature/secrets';

/** No provider offers an endpoint to test a signing secret against, so the test checks its shape. */
export async function webhookSigningSecretTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const data = credential.data ?? {};
	const problem = secretsProblem({
		current: typeof data.secret === 'string' ? data.secret : '',
		previous: typeof data.previousSecret === 'string' ? data.previousSecret : '',
	});
	return problem
		? { status: 'Error', message: problem }
		: { status: 'OK', message: 'The secret is set' };
}
