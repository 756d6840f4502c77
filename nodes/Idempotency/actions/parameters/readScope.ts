import type { IExecuteFunctions } from 'n8n-workflow';

import { claimProperties } from '../../descriptions/claimProperties';
import { UnsavedWorkflowError } from '../../errors';
import type { KeyRule } from '../../key/keyRule';
import { readChoice } from '../../../shared/readChoice';

/** A Key Source the editor offers: a key rule's source, or a provider preset that names one. */
export type KeySource = KeyRule['source'] | 'preset';

interface PolledState {
	/** The first item's Key Source. */
	source: KeySource;
	polled: boolean;
	scope?: string;
}

/** Per execution: whether the items are polled, and then their one scope (read once, see readScope). */
const polledScopes = new WeakMap<IExecuteFunctions, PolledState>();

function polledState(context: IExecuteFunctions): PolledState {
	let state = polledScopes.get(context);
	if (!state) {
		const source = keySourceOf(context, 0);
		state = { source, polled: source === 'polled' };
		polledScopes.set(context, state);
	}
	return state;
}

/** The item's Key Source; the first item's was read already, to tell whether the items are polled. */
export function readKeySource(context: IExecuteFunctions, index: number): KeySource {
	return index === 0 ? polledState(context).source : keySourceOf(context, index);
}

function keySourceOf(context: IExecuteFunctions, index: number): KeySource {
	return readChoice<KeySource>(context, claimProperties, 'keySource', index, 'auto');
}

/** Whether the claim node keys polled items (Key Source "Polled Item"). */
export function isPolledItem(context: IExecuteFunctions): boolean {
	return polledState(context).polled;
}

/**
 * The item's Scope option. A webhook key reads it per item (a provider's topic header can differ from
 * item to item) and keeps no prefix when it is empty. Polled items are one feed: their Scope is read
 * once, from the first item (n8n evaluates an expression such as `{{ $workflow.id }}` anew for every
 * item it is asked for, ~1 ms each), and when empty it is this node's own history, `<workflow id>/<node
 * id>`: Remove Duplicates' default (Scope Node), and what `{{ $workflow.id }}/{{ $nodeId }}` gives.
 */
export function readScope(context: IExecuteFunctions, index: number): string {
	const state = polledState(context);
	if (!state.polled) return scopeOption(context, index);
	state.scope ??= scopeOption(context, 0) || nodeScope(context);
	return state.scope;
}

function scopeOption(context: IExecuteFunctions, index: number): string {
	return String(context.getNodeParameter('options.scope', index, '') ?? '');
}

function nodeScope(context: IExecuteFunctions): string {
	const workflowId = context.getWorkflow().id;
	if (!workflowId)
		throw new UnsavedWorkflowError(
			'a polled item without a Scope is kept per node: save the workflow first',
		);
	return `${workflowId}/${context.getNode().id}`;
}
