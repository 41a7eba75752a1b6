import { useState } from 'preact/hooks';
import { ApiError, gql, type FieldError, type Json } from '../api';
import { ErrorBanner, FieldMessage, Section } from '../components';
import { useQuery } from '../hooks';

const POLICY_FIELDS = `id name policy_mode is_default updated_at
  input_detectors { detector_type threshold action } output_detectors { detector_type threshold action }
  allow_list { entries match_type } deny_list { entries match_type } custom_detectors { name pattern action }
  rate_limits { rate_limits_enabled requests_per_minute tokens_per_minute max_input_tokens max_input_characters max_output_tokens burst_multiplier cost_limit_per_day_cents }`;
const POLICIES_Q = `{ policies(limit: 100) { count results { ${POLICY_FIELDS} } } detector_types { value label category } threshold_levels { value label } }`;
const UPDATE_M = `mutation Update($id: ID!, $input: UpdatePolicyInput!) { updatePolicy(id: $id, input: $input) { ${POLICY_FIELDS} } }`;
const DUPLICATE_M = `mutation Duplicate($id: ID!) { duplicatePolicy(id: $id) { id name } }`;
const DEFAULT_M = `mutation SetDefault($id: ID!) { setDefaultPolicy(id: $id) { id } }`;
const CREATE_M = `mutation Create($input: CreatePolicyInput!) { createPolicy(input: $input) { id } }`;

const ACTIONS = ['block', 'log', 'alert'];
const MATCH_TYPES = ['contains', 'exact', 'regex'];
const LIMITS: Array<{ key: string; label: string; int: boolean }> = [
  { key: 'requests_per_minute', label: 'Requests per minute', int: true },
  { key: 'tokens_per_minute', label: 'Tokens per minute', int: true },
  { key: 'max_input_tokens', label: 'Max input tokens', int: true },
  { key: 'max_input_characters', label: 'Max input characters', int: true },
  { key: 'max_output_tokens', label: 'Max output tokens', int: true },
  { key: 'burst_multiplier', label: 'Burst multiplier', int: false },
  { key: 'cost_limit_per_day_cents', label: 'Cost limit per day (cents, 0 = off)', int: true },
];

/** The editable copy of a policy: lists as text (one entry per line), limits as the typed strings. */
interface Draft {
  name: string;
  policy_mode: string;
  input_detectors: Json[];
  output_detectors: Json[];
  allow: { text: string; match_type: string };
  deny: { text: string; match_type: string };
  rate_limits_enabled: boolean;
  limits: Record<string, string>;
}

const draftOf = (p: Json): Draft => ({
  name: p.name,
  policy_mode: p.policy_mode,
  input_detectors: p.input_detectors.map((d: Json) => ({ ...d })),
  output_detectors: p.output_detectors.map((d: Json) => ({ ...d })),
  allow: { text: p.allow_list.entries.join('\n'), match_type: p.allow_list.match_type },
  deny: { text: p.deny_list.entries.join('\n'), match_type: p.deny_list.match_type },
  rate_limits_enabled: p.rate_limits.rate_limits_enabled,
  limits: Object.fromEntries(LIMITS.map((l) => [l.key, String(p.rate_limits[l.key])])),
});

const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** The update input; values the API cannot even receive (not numbers) become field errors here, the rest is the API's to judge. */
function inputOf(d: Draft): { input: Json; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const rate_limits: Json = { rate_limits_enabled: d.rate_limits_enabled };
  for (const l of LIMITS) {
    const raw = d.limits[l.key]!.trim();
    const n = Number(raw);
    if (raw === '' || !Number.isFinite(n)) errors.push({ path: `rate_limits.${l.key}`, message: 'must be a number' });
    else if (l.int && !Number.isInteger(n)) errors.push({ path: `rate_limits.${l.key}`, message: 'must be a whole number' });
    else rate_limits[l.key] = n;
  }
  const strip = (list: Json[]) => list.map((x) => ({ detector_type: x.detector_type, threshold: x.threshold, action: x.action }));
  return {
    errors,
    input: {
      name: d.name,
      policy_mode: d.policy_mode,
      input_detectors: strip(d.input_detectors),
      output_detectors: strip(d.output_detectors),
      allow_list: { entries: lines(d.allow.text), match_type: d.allow.match_type },
      deny_list: { entries: lines(d.deny.text), match_type: d.deny.match_type },
      rate_limits,
    },
  };
}

export function PoliciesPage() {
  const q = useQuery(POLICIES_Q, {});
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [newName, setNewName] = useState('');
  const list: Json[] = q.data?.policies.results ?? [];
  const act = async (query: string, variables: Json) => {
    setError(null);
    try {
      await gql(query, variables);
      q.reload();
    } catch (e) {
      setError(e as ApiError);
    }
  };
  const current = list.find((p) => p.id === editing);
  return (
    <div class="split">
      <Section title={`Policies (${list.length})`}>
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Mode</th>
              <th scope="col">Detectors (in / out)</th>
              <th scope="col">Limits</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((p) => (
              <tr key={p.id} data-testid="policy-row" class={p.id === editing ? 'selected' : undefined}>
                <td>
                  {p.name} {p.is_default && <span class="badge default">default</span>}
                </td>
                <td>{p.policy_mode}</td>
                <td>
                  {p.input_detectors.length} / {p.output_detectors.length}
                </td>
                <td>{p.rate_limits.rate_limits_enabled ? `${p.rate_limits.requests_per_minute} rpm` : 'off'}</td>
                <td class="actions">
                  <button onClick={() => setEditing(p.id)} aria-label={`Edit ${p.name}`}>
                    Edit
                  </button>
                  <button onClick={() => act(DUPLICATE_M, { id: p.id })} aria-label={`Duplicate ${p.name}`}>
                    Duplicate
                  </button>
                  {!p.is_default && (
                    <button onClick={() => act(DEFAULT_M, { id: p.id })} aria-label={`Make ${p.name} the default`}>
                      Set default
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (newName.trim()) void act(CREATE_M, { input: { name: newName.trim() } }).then(() => setNewName(''));
          }}
        >
          <label>
            New policy name
            <input name="newPolicy" value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
          </label>
          <button type="submit">Create policy</button>
        </form>
        <ErrorBanner error={error ?? q.error} />
      </Section>
      {current && q.data && (
        <PolicyEditor
          key={current.id}
          policy={current}
          detectorTypes={q.data.detector_types}
          thresholds={q.data.threshold_levels}
          onSaved={() => q.reload()}
          onClose={() => setEditing(null)}
        />
      )}
    </div>
  );
}

function DetectorTable({ label, rows, onChange, errors, prefix, detectorTypes, thresholds }: {
  label: string;
  rows: Json[];
  onChange: (rows: Json[]) => void;
  errors: FieldError[];
  prefix: string;
  detectorTypes: Json[];
  thresholds: Json[];
}) {
  const update = (i: number, patch: Json) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset>
      <legend>{label}</legend>
      <FieldMessage errors={errors} path={prefix} />
      <table class="compact">
        <thead>
          <tr>
            <th scope="col">Detector</th>
            <th scope="col">Threshold</th>
            <th scope="col">Action</th>
            <th scope="col">
              <span class="sr-only">Remove</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i} data-testid={`${prefix}-row`}>
              <td>
                <select aria-label={`${label} ${i + 1}: detector`} value={r.detector_type} onChange={(e) => update(i, { detector_type: e.currentTarget.value })}>
                  {detectorTypes.map((d) => (
                    <option key={d.value} value={d.value}>
                      {d.value}
                    </option>
                  ))}
                </select>
                <FieldMessage errors={errors} path={`${prefix}.${i}.detector_type`} />
              </td>
              <td>
                <select aria-label={`${label} ${i + 1}: threshold`} name={`${prefix}.${i}.threshold`} value={r.threshold} onChange={(e) => update(i, { threshold: e.currentTarget.value })}>
                  {thresholds.map((t) => (
                    <option key={t.value} value={t.value}>
                      {t.value} ({t.label})
                    </option>
                  ))}
                </select>
                <FieldMessage errors={errors} path={`${prefix}.${i}.threshold`} />
              </td>
              <td>
                <select aria-label={`${label} ${i + 1}: action`} value={r.action} onChange={(e) => update(i, { action: e.currentTarget.value })}>
                  {ACTIONS.map((a) => (
                    <option key={a}>{a}</option>
                  ))}
                </select>
                <FieldMessage errors={errors} path={`${prefix}.${i}.action`} />
              </td>
              <td>
                <button type="button" class="link" aria-label={`Remove ${r.detector_type} from ${label}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={() => onChange([...rows, { detector_type: detectorTypes[0]?.value, threshold: 'L2', action: 'block' }])}>
        Add a detector
      </button>
    </fieldset>
  );
}

function ListEditor({ label, value, onChange, errors, path }: { label: string; value: { text: string; match_type: string }; onChange: (v: { text: string; match_type: string }) => void; errors: FieldError[]; path: string }) {
  const entryErrors = errors.filter((e) => e.path.startsWith(`${path}.`));
  return (
    <fieldset>
      <legend>{label}</legend>
      <label>
        Entries (one per line)
        <textarea name={path} rows={3} value={value.text} onInput={(e) => onChange({ ...value, text: e.currentTarget.value })} />
      </label>
      <label>
        Match type
        <select value={value.match_type} onChange={(e) => onChange({ ...value, match_type: e.currentTarget.value })}>
          {MATCH_TYPES.map((m) => (
            <option key={m}>{m}</option>
          ))}
        </select>
      </label>
      {entryErrors.map((e) => (
        <span key={e.path} class="field-error" role="alert" data-testid="field-error">
          {e.path.replace(`${path}.`, '')}: {e.message}
        </span>
      ))}
    </fieldset>
  );
}

function PolicyEditor({ policy, detectorTypes, thresholds, onSaved, onClose }: { policy: Json; detectorTypes: Json[]; thresholds: Json[]; onSaved: () => void; onClose: () => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(policy));
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState(false);
  const set = (patch: Partial<Draft>) => {
    setDraft({ ...draft, ...patch });
    setSaved(false);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    const { input, errors: local } = inputOf(draft);
    setErrors(local);
    if (local.length) return;
    try {
      await gql(UPDATE_M, { id: policy.id, input });
      setSaved(true);
      onSaved();
    } catch (err) {
      const apiErr = err as ApiError;
      setErrors(apiErr.fields ?? []);
      setError(apiErr);
    }
  };
  return (
    <section class="card editor" data-testid="policy-editor" aria-labelledby="policy-editor-title">
      <div class="section-head">
        <h2 id="policy-editor-title">Edit “{policy.name}”</h2>
        <button class="link" onClick={onClose}>
          Close
        </button>
      </div>
      <form onSubmit={save} class="stack" noValidate>
        <div class="row">
          <label>
            Name
            <input name="name" value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} aria-invalid={errors.some((x) => x.path === 'name')} />
            <FieldMessage errors={errors} path="name" />
          </label>
          <label>
            Mode
            <select name="policy_mode" value={draft.policy_mode} onChange={(e) => set({ policy_mode: e.currentTarget.value })}>
              <option value="IO">IO (input and output)</option>
              <option value="I">I (input only)</option>
              <option value="O">O (output only)</option>
            </select>
          </label>
        </div>
        <DetectorTable label="Input detectors" prefix="input_detectors" rows={draft.input_detectors} onChange={(r) => set({ input_detectors: r })} errors={errors} detectorTypes={detectorTypes} thresholds={thresholds} />
        <DetectorTable label="Output detectors" prefix="output_detectors" rows={draft.output_detectors} onChange={(r) => set({ output_detectors: r })} errors={errors} detectorTypes={detectorTypes} thresholds={thresholds} />
        <div class="row">
          <ListEditor label="Allow list" path="allow_list" value={draft.allow} onChange={(v) => set({ allow: v })} errors={errors} />
          <ListEditor label="Deny list" path="deny_list" value={draft.deny} onChange={(v) => set({ deny: v })} errors={errors} />
        </div>
        {policy.custom_detectors.length > 0 && (
          <p class="muted">
            Custom detectors (edit through the API): {policy.custom_detectors.map((c: Json) => `${c.name} (${c.action})`).join(', ')}
          </p>
        )}
        <fieldset>
          <legend>Limits</legend>
          <label class="inline">
            <input type="checkbox" name="rate_limits_enabled" checked={draft.rate_limits_enabled} onChange={(e) => set({ rate_limits_enabled: e.currentTarget.checked })} /> Enforce these limits
          </label>
          <div class="grid">
            {LIMITS.map((l) => {
              const path = `rate_limits.${l.key}`;
              const bad = errors.some((x) => x.path === path);
              return (
                <label key={l.key}>
                  {l.label}
                  <input
                    name={path}
                    inputMode={l.int ? 'numeric' : 'decimal'}
                    value={draft.limits[l.key]}
                    aria-invalid={bad}
                    aria-describedby={bad ? `${l.key}-error` : undefined}
                    onInput={(e) => set({ limits: { ...draft.limits, [l.key]: e.currentTarget.value } })}
                  />
                  <FieldMessage errors={errors} path={path} id={`${l.key}-error`} />
                </label>
              );
            })}
          </div>
        </fieldset>
        <div class="row">
          <button type="submit">Save policy</button>
          {saved && (
            <span class="ok" role="status">
              Saved.
            </span>
          )}
        </div>
        {error && errors.length === 0 && <ErrorBanner error={error} />}
        {error && errors.length > 0 && (
          <p class="error" role="alert">
            Not saved: {errors.length === 1 ? 'one field needs' : `${errors.length} fields need`} fixing (marked above).
          </p>
        )}
      </form>
    </section>
  );
}
