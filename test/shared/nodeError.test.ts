/**
 * The one translation of the package's errors into n8n's (nodes/shared/nodeError.ts). That no plain Error
 * and no n8n error made elsewhere is raised in nodes/ is eslint.config.mjs's rule (`npm run lint`).
 */
import { NodeApiError, NodeOperationError, type IExecuteFunctions, type INode } from 'n8n-workflow';

import { KeyError, SettingError } from '../../nodes/Idempotency/errors';
import { itemFailure, messageOf, nodeError } from '../../nodes/shared/nodeError';
import { ChoiceError } from '../../nodes/shared/packageError';

const node: INode = {
	id: 'n1',
	name: 'Idempotency Claim',
	type: 'n8n-nodes-idempotency.idempotencyClaim',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/** What itemFailure reads of an execution: its node and its Continue setting. */
const execution = (continueOnFail: boolean) =>
	({ getNode: () => node, continueOnFail: () => continueOnFail }) as unknown as IExecuteFunctions;

describe('nodeError', () => {
	it("turns the package's error into n8n's, keeping its message, its item and the error as cause", () => {
		const cause = new ChoiceError('Parameter "operation" is "x"', { itemIndex: 2 });
		const error = nodeError(node, cause);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect(error.message).toBe('Parameter "operation" is "x"');
		expect(error.context.itemIndex).toBe(2);
		expect(error.cause).toBe(cause);
		expect(error.node).toBe(node);
	});

	it("passes n8n's own errors as they are", () => {
		const operation = new NodeOperationError(node, 'as n8n raised it');
		const api = new NodeApiError(node, { message: 'from an API' });
		expect(nodeError(node, operation)).toBe(operation);
		expect(nodeError(node, api)).toBe(api);
	});

	it('says the message given, with the description under it (dropped when it says the same)', () => {
		const driver = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
		const error = nodeError(node, driver, {
			message: 'Connection refused at db:5432',
			description: 'connect ECONNREFUSED',
		});
		expect(error.message).toBe('Connection refused at db:5432');
		expect(error.description).toBe('connect ECONNREFUSED');
		const same = nodeError(node, new SettingError('x'), { message: 'x', description: 'x' });
		expect(same.description).toBeFalsy();
	});

	it("gives an n8n error a new message as a new error (n8n's constructor would hand the old one back)", () => {
		const original = new NodeOperationError(node, 'Expression failed');
		const error = nodeError(node, original, { message: 'Public URL: Expression failed' });
		expect(error).not.toBe(original);
		expect(error.message).toBe('Public URL: Expression failed');
	});
});

describe('itemFailure', () => {
	it('without a Continue setting stops the node with an error naming the item', () => {
		let thrown: unknown;
		try {
			itemFailure(execution(false), new KeyError('no key: the body is empty'), 3);
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(NodeOperationError);
		expect((thrown as NodeOperationError).message).toBe('Item 3: no key: the body is empty');
		expect((thrown as NodeOperationError).context.itemIndex).toBe(3);
	});

	it("with one, returns the item's message for the caller to send it out failed", () => {
		expect(itemFailure(execution(true), new KeyError('no key'), 1)).toBe('Item 1: no key');
	});
});

describe('messageOf', () => {
	it('reads what anything thrown says', () => {
		expect(messageOf(new Error('e'))).toBe('e');
		expect(messageOf({ message: 'm' })).toBe('m');
		expect(messageOf('text')).toBe('text');
		expect(messageOf(undefined)).toBe('undefined');
	});
});
