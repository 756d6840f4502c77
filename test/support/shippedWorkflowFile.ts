/**
 * A shipped workflow file as the structural template tests read it: its nodes with their parameters, and
 * where each node's outputs lead (by node name), as the file has them, before n8n sees it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../../harness/repo';

export interface ShippedNode {
	name: string;
	type: string;
	onError?: string;
	parameters: Record<string, unknown>;
}

export interface ShippedWorkflowFile {
	nodes: ShippedNode[];
	connections: Record<string, { main: Array<Array<{ node: string }>> }>;
}

/** `workflows/<file>`, parsed. */
export function readShippedWorkflow(file: string): ShippedWorkflowFile {
	return JSON.parse(
		readFileSync(join(REPO_ROOT, 'workflows', file), 'utf8'),
	) as ShippedWorkflowFile;
}
