import { FIRST_NAME_LIST } from '../../../../src/detection/detectors/pii/lexicons/first-names';
import { LAST_NAME_LIST } from '../../../../src/detection/detectors/pii/lexicons/last-names';
import { PersonNameDetector } from '../../../../src/detection/detectors/pii/person-name-detector';

const detector = new PersonNameDetector();
const scan = (text: string) =>
  detector
    .detect({ text, direction: 'input' }, new AbortController().signal)
    .map((f) => ({ match: text.slice(f.start, f.end), confidence: f.confidence }));
const best = (text: string) => Math.max(0, ...scan(text).map((f) => f.confidence));

describe('PersonNameDetector', () => {
  it('ships lexicons of a few thousand lower-case names', () => {
    expect(FIRST_NAME_LIST.length).toBeGreaterThan(1000);
    expect(LAST_NAME_LIST.length).toBeGreaterThan(1500);
    for (const name of [...FIRST_NAME_LIST, ...LAST_NAME_LIST]) expect(name).toBe(name.toLowerCase());
  });

  it.each([
    ['Please forward this to John Smith in accounting.', 'John Smith'],
    ['The meeting with Sarah Johnson went well.', 'Sarah Johnson'],
    ['Jonathan R. Davis approved the budget.', 'Jonathan R. Davis'],
    ["Customer Kevin O'Brien called twice.", "Kevin O'Brien"],
    ['Mary-Jane Watson moved.', 'Mary-Jane Watson'],
    ['Patient: Maria Garcia, DOB 02/03/1980', 'Maria Garcia'],
    ['Dear Mrs. Patel, thank you.', 'Patel'],
    ['My name is Alice and I need help.', 'Alice'],
    ['Hi Priya, can you check?', 'Priya'],
    ['Best regards,\nMichael Chen\nSenior Engineer', 'Michael Chen'],
    ['Thanks,\nSarah', 'Sarah'],
    ['my name is john smith', 'john smith'],
    ['MY NAME IS john smith', 'john smith'],
    ['nAmE: john', 'john'],
    ['you can call me maria', 'maria'],
    ['call ME maria', 'maria'],
    ["hello, i'm priya", 'priya'],
    ['first line\nI did the report. I know. But my name is john smith', 'john smith'],
  ])('reports the name in %j at L2 or above', (text, expected) => {
    const findings = scan(text).filter((f) => f.confidence >= 0.75);
    expect(findings.map((f) => f.match)).toEqual([expected]);
  });

  it('finds every lower-case self-introduction of a long text, in order, whatever the case of the phrase', () => {
    const parts = ['my name is john smith', 'NAME: maria', 'Call Me david', "I'M priya", 'i am olivia'];
    const filler = 'The quarterly report is ready. I checked it twice and the numbers hold. ';
    const text = parts.map((p) => `${filler.repeat(40)}${p}.`).join(' ');
    expect(scan(text).filter((f) => f.confidence >= 0.75).map((f) => f.match)).toEqual(['john smith', 'maria', 'david', 'priya', 'olivia']);
  });

  it('orders confidence by the evidence', () => {
    const single = best('I think Daniel is right.');
    const pair = best('I think Daniel Kim is right.');
    const pairWithContext = best('Patient Daniel Kim is ready.');
    const singleWithContext = best('My name is Daniel.');
    expect(single).toBeLessThan(0.5);
    expect(pair).toBeCloseTo(0.8);
    expect(pairWithContext).toBeGreaterThanOrEqual(0.9);
    expect(singleWithContext).toBeGreaterThanOrEqual(0.8);
    expect(best('Daniel went home.')).toBeLessThanOrEqual(single);
  });

  it.each([
    ['Will you review the PR today?'],
    ['May I ask a question?'],
    ['Mark the task as done.'],
    ['Rose petals are lovely.'],
    ['Bill the customer next week.'],
    ['class JohnsonController extends BaseController {}'],
    ['The JohnsonController handles requests.'],
    ['const userName = getUserName(user.firstName);'],
    ['Morgan Stanley reported earnings.'],
    ['We deployed Jenkins and Travis for CI.'],
    ['Jordan is a country in the Middle East.'],
    ['George Washington University is in DC.'],
    ['Getting Started With The New API'],
    ['Martin Luther King Jr. Day is a holiday.'],
    ['Hope you are well!'],
    ['Dear Customer, your order shipped.'],
    ['Hi Team, the build is green.'],
  ])('does not report %j at L2', (text) => {
    expect(best(text)).toBeLessThan(0.75);
  });

  it('scores two everyday words low and does not report a single one without context', () => {
    expect(best('Will Power is a great title.')).toBeLessThan(0.5);
    expect(scan('Grace period ends Friday.')).toEqual([]);
    expect(scan('Mark it done.')).toEqual([]);
  });

  it('spans only the name tokens, not the title or greeting', () => {
    expect(scan('Dr. Okonkwo will see you now.')).toEqual([{ match: 'Okonkwo', confidence: 0.85 }]);
    expect(scan('Dear John Smith,')).toEqual([{ match: 'John Smith', confidence: 0.95 }]);
  });

  it('honours an aborted signal', () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    expect(() => detector.detect({ text: 'Alice Smith met Bob Jones. '.repeat(500), direction: 'input' }, controller.signal)).toThrow(
      'stop',
    );
  });

  it('keeps at most 1000 findings on a large input', () => {
    const text = 'Alice Smith met Bob Jones. '.repeat(2000);
    expect(detector.detect({ text, direction: 'input' }, new AbortController().signal)).toHaveLength(1000);
  });
});
