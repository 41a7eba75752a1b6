import { useState } from 'preact/hooks';
import { ApiError, gql, type FieldError, type Json } from '../api';
import { ErrorBanner, FieldMessage, Section } from '../components';
import { formatTime } from '../format';
import { useQuery } from '../hooks';

const PROJECT_FIELDS = 'id name key_prefix environment policy_id policy_name uses_default_policy key_scope is_active created_at last_used_at';
const PROJECTS_Q = `{ projects(limit: 100) { count results { ${PROJECT_FIELDS} } } policies(limit: 100) { results { id name is_default } } }`;
const CREATE_M = `mutation Create($input: CreateProjectInput!) { createProject(input: $input) { id name raw_key key_scope } }`;
const UPDATE_M = `mutation Update($id: ID!, $input: UpdateProjectInput!) { updateProject(id: $id, input: $input) { id } }`;
const ROTATE_M = `mutation Rotate($id: ID!) { rotateProjectKey(id: $id) { id name raw_key } }`;

/** A raw key, shown once after create or rotate, with a copy button. */
function NewKey({ created, onDone }: { created: Json; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.raw_key);
      setCopied(true);
    } catch {
      // No clipboard permission (e.g. plain http): the key is selectable.
      setCopied(false);
    }
  };
  return (
    <div class="newkey" role="status" data-testid="new-key">
      <p>
        <strong>Key of “{created.name}”</strong>: shown once only. Copy it now; the gateway stores only its hash.
      </p>
      <code data-testid="raw-key">{created.raw_key}</code>
      <div class="row">
        <button onClick={copy}>{copied ? 'Copied' : 'Copy key'}</button>
        <button class="link" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </div>
  );
}

export function ProjectsPage() {
  const q = useQuery(PROJECTS_Q, {});
  const [created, setCreated] = useState<Json | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [fields, setFields] = useState<FieldError[]>([]);
  const [form, setForm] = useState({ name: '', environment: 'production', policy_id: '', key_scope: 'full' });
  const projects: Json[] = q.data?.projects.results ?? [];
  const policies: Json[] = q.data?.policies.results ?? [];
  const run = async (query: string, variables: Json): Promise<Json | null> => {
    setError(null);
    setFields([]);
    try {
      const d = await gql(query, variables);
      q.reload();
      return d;
    } catch (e) {
      setError(e as ApiError);
      setFields((e as ApiError).fields ?? []);
      return null;
    }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    const input: Json = { name: form.name, environment: form.environment, key_scope: form.key_scope };
    if (form.policy_id) input.policy_id = form.policy_id;
    const d = await run(CREATE_M, { input });
    if (d) {
      setCreated(d.createProject);
      setForm({ ...form, name: '' });
    }
  };
  const rotate = async (p: Json) => {
    if (!confirm(`Rotate the key of “${p.name}”? The current key stops working at once.`)) return;
    const d = await run(ROTATE_M, { id: p.id });
    if (d) setCreated(d.rotateProjectKey);
  };
  return (
    <>
      {created && <NewKey created={created} onDone={() => setCreated(null)} />}
      <Section title={`Projects (${projects.length})`}>
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Environment</th>
              <th scope="col">Scope</th>
              <th scope="col">Policy</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {projects.map((p) => (
              <tr key={p.id} data-testid="project-row">
                <td>
                  {p.name} {!p.is_active && <span class="badge">inactive</span>}
                </td>
                <td>
                  <code>{p.key_prefix}…</code>
                </td>
                <td>{p.environment}</td>
                <td>
                  <select aria-label={`Key scope of ${p.name}`} value={p.key_scope} onChange={(e) => run(UPDATE_M, { id: p.id, input: { key_scope: e.currentTarget.value } })}>
                    <option value="full">full (traffic and management)</option>
                    <option value="traffic">traffic only</option>
                  </select>
                </td>
                <td>
                  <select
                    aria-label={`Policy of ${p.name}`}
                    value={p.uses_default_policy ? '' : p.policy_id}
                    onChange={(e) => run(UPDATE_M, { id: p.id, input: { policy_id: e.currentTarget.value || null } })}
                  >
                    <option value="">Organization default ({policies.find((x) => x.is_default)?.name ?? '—'})</option>
                    {policies.map((x) => (
                      <option key={x.id} value={x.id}>
                        {x.name}
                      </option>
                    ))}
                  </select>
                </td>
                <td>{p.last_used_at ? formatTime(p.last_used_at) : 'never'}</td>
                <td>
                  <button onClick={() => rotate(p)} aria-label={`Rotate the key of ${p.name}`}>
                    Rotate key
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <ErrorBanner error={error ?? q.error} />
      </Section>
      <Section title="New project">
        <form class="row" onSubmit={create}>
          <label>
            Name
            <input name="projectName" value={form.name} required onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
            <FieldMessage errors={fields} path="name" />
          </label>
          <label>
            Environment
            <select value={form.environment} onChange={(e) => setForm({ ...form, environment: e.currentTarget.value })}>
              <option>production</option>
              <option>staging</option>
              <option>development</option>
            </select>
          </label>
          <label>
            Key scope
            <select value={form.key_scope} onChange={(e) => setForm({ ...form, key_scope: e.currentTarget.value })}>
              <option value="full">full</option>
              <option value="traffic">traffic</option>
            </select>
          </label>
          <label>
            Policy
            <select value={form.policy_id} onChange={(e) => setForm({ ...form, policy_id: e.currentTarget.value })}>
              <option value="">Organization default</option>
              {policies.map((x) => (
                <option key={x.id} value={x.id}>
                  {x.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Create project</button>
        </form>
      </Section>
    </>
  );
}
