import { join } from 'node:path';

import { loadWorkflowFile, type WorkflowJson } from '../../harness/n8n/workflows';

/** A workflow the e2e tests alone use (test/e2e/fixtures), with an n8n workflow id. */
export function loadFixtureWorkflow(file: string): WorkflowJson {
	return loadWorkflowFile(join(__dirname, '..', 'e2e', 'fixtures', file));
}
