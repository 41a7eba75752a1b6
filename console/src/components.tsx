import type { ComponentChildren } from 'preact';
import type { ApiError, FieldError } from './api';
import type { Decision } from './format';

export function ErrorBanner({ error }: { error: ApiError | Error | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.message}
    </p>
  );
}

export function DecisionBadge({ decision }: { decision: Decision }) {
  return <span class={`badge ${decision}`}>{decision}</span>;
}

/** The API's message for one field (extensions.fields[].path), shown under the input it belongs to. */
export function FieldMessage({ errors, path, id }: { errors: FieldError[]; path: string; id?: string }) {
  const mine = errors.filter((e) => e.path === path);
  if (mine.length === 0) return null;
  return (
    <span class="field-error" id={id} role="alert" data-testid="field-error">
      {mine.map((e) => e.message).join('; ')}
    </span>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <div class="section-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}
