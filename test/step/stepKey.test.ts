import { SettingError } from '../../nodes/Idempotency/errors';
import { stepKey } from '../../nodes/Idempotency/step/stepKey';
import { stepName } from '../../nodes/Idempotency/step/stepName';

describe('stepKey', () => {
	it('is the same for an event and step on every run, and differs for another event or step', () => {
		const key = stepKey('evt:evt_1', 'charge card');
		expect(key).toMatch(/^[0-9a-f]{64}$/);
		expect(stepKey('evt:evt_1', 'charge card')).toBe(key);
		expect(stepKey('evt:evt_2', 'charge card')).not.toBe(key);
		expect(stepKey('evt:evt_1', 'send mail')).not.toBe(key);
	});

	it('never lets two (event, step) pairs spell one text', () => {
		expect(stepKey('a', 'b c')).not.toBe(stepKey('a b', 'c'));
		expect(stepKey('a","b', 'c')).not.toBe(stepKey('a', 'b","c'));
	});
});

describe('stepName', () => {
	it.each(['charge card', 'send-mail', 'stripe.refund', 'v2:notify', 'x'.repeat(64), ' padded '])(
		'accepts %j',
		(name) => expect(stepName(name)).toBe(name.trim()),
	);

	it.each(['', '   ', 'x'.repeat(65), '{{ $now }}', 'a;b', "it's", '-lead', 'new\nline', 12, null])(
		'refuses %j',
		(name) => expect(() => stepName(name)).toThrow(SettingError),
	);
});
