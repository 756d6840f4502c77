import type { IExecuteFunctions } from 'n8n-workflow';

import {
	burstProperties,
	MAX_ITEMS_LIMIT,
	MAX_WAIT_LIMIT_SECONDS,
} from '../../descriptions/burstProperties';
import { LONGEST_DURATION_SECONDS } from '../../descriptions/durationLimit';
import type { BurstEdge, BurstRules } from '../../store/bursts/burstRecord';
import { readChoice } from '../../../shared/readChoice';
import { readNumber } from '../parameters/readNumber';

/** Collect's rules, read once per execution (one execution collects under one set of rules). */
export function readBurstRules(context: IExecuteFunctions): BurstRules {
	const edge = readChoice<BurstEdge>(context, burstProperties, 'edge', 0, 'trailing');
	const seconds = (name: string, label: string, max?: number) =>
		Math.round(readNumber(context.getNodeParameter(name, 0), label, { min: 0.01, max }) * 1000);
	const quietMs = seconds('quietSeconds', 'Quiet Period (Seconds)', LONGEST_DURATION_SECONDS);
	const maxWaitMs = seconds('maxWaitSeconds', 'Max Wait (Seconds)', MAX_WAIT_LIMIT_SECONDS);
	const maxItems = readNumber(context.getNodeParameter('maxItems', 0), 'Max Items', {
		min: 1,
		max: MAX_ITEMS_LIMIT,
		integer: true,
	});
	return { edge, quietMs, maxWaitMs, maxItems, leaseMs: readLeaseMs(context) };
}

/** Lease (Seconds), in milliseconds: Collect's and Flush Due Bursts'. */
export function readLeaseMs(context: IExecuteFunctions): number {
	const lease = readNumber(context.getNodeParameter('leaseSeconds', 0, 300), 'Lease (Seconds)', {
		min: 1,
		max: LONGEST_DURATION_SECONDS,
	});
	return Math.round(lease * 1000);
}
