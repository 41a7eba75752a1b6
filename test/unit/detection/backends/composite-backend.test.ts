import { BackendError } from '../../../../src/detection/classifiers/backends/backend-errors';
import { CompositeBackend } from '../../../../src/detection/classifiers/backends/composite-backend';
import { stubBackend } from './stub-backend';

const signal = () => new AbortController().signal;

describe('CompositeBackend (two backends for one type)', () => {
  it('asks every member and takes the highest score per type', async () => {
    const a = stubBackend('builtin', ['prompt_attack', 'jailbreak'], () => ({ prompt_attack: 0.2, jailbreak: 0.9 }));
    const b = stubBackend('http-classifier', ['prompt_attack', 'jailbreak'], () => ({ prompt_attack: 0.7, jailbreak: 0.1 }));
    const c = new CompositeBackend([a.backend, b.backend], ['prompt_attack', 'jailbreak']);
    expect(c.name).toBe('builtin+http-classifier');
    expect(await c.classify('t', signal())).toEqual({ prompt_attack: 0.7, jailbreak: 0.9 });
    expect(a.calls).toEqual(['t']);
    expect(b.calls).toEqual(['t']);
  });

  it('one member fails, the other answers: the result stands (counted as degraded)', async () => {
    const a = stubBackend('builtin', ['prompt_attack'], () => ({ prompt_attack: 0.3 }));
    const b = stubBackend('http-classifier', ['prompt_attack'], () => new BackendError('timeout', 'http-classifier: no answer within 800 ms'));
    const c = new CompositeBackend([a.backend, b.backend], ['prompt_attack']);
    expect(await c.classify('t', signal())).toEqual({ prompt_attack: 0.3 });
    expect(c.degraded).toBe(1);
  });

  it('every member fails: throws with every reason (the fail mode then applies)', async () => {
    const a = stubBackend('builtin', ['prompt_attack'], () => new Error('model not loaded'));
    const b = stubBackend('http-classifier', ['prompt_attack'], () => new BackendError('http_status', 'http-classifier: HTTP 503'));
    const c = new CompositeBackend([a.backend, b.backend], ['prompt_attack']);
    await expect(c.classify('t', signal())).rejects.toMatchObject({
      kind: 'all_failed',
      message: 'every backend failed (builtin: model not loaded; http-classifier: HTTP 503)',
    });
  });

  it('only returns its own types', async () => {
    const a = stubBackend('llm-judge', ['prompt_attack', 'moderated_content/hate'], () => ({ prompt_attack: 0.1, 'moderated_content/hate': 0.8 }));
    const b = stubBackend('builtin', ['prompt_attack'], () => ({ prompt_attack: 0.2 }));
    const c = new CompositeBackend([a.backend, b.backend], ['prompt_attack']);
    expect(await c.classify('t', signal())).toEqual({ prompt_attack: 0.2 });
  });

  it('refuses a member that cannot score one of its types', () => {
    const a = stubBackend('builtin', ['prompt_attack', 'jailbreak'], () => ({}));
    const b = stubBackend('http-classifier', ['prompt_attack'], () => ({}));
    expect(() => new CompositeBackend([a.backend, b.backend], ['prompt_attack', 'jailbreak'])).toThrow('backend http-classifier cannot score jailbreak');
  });
});
