import { z } from 'zod';
import { storableText } from '../../shared/storable-text';
import type { Storage } from '../../storage/data-source';
import { provisionOrganization } from '../../storage/provision';
import { environmentSchema } from '../projects/project.schemas';
import type { ProjectService } from '../projects/project.service';
import { isoString } from '../query-helpers';
import type { CreatedProjectView } from '../views';

const name = storableText(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'));

/** Body of POST /v1/organizations: the options of `create-org` (--name, --project, --environment). */
export const createOrganizationSchema = z.strictObject({
  name,
  /** The first project's name; default "<name> project". */
  project_name: name.optional(),
  /** The first project's environment; default production. */
  environment: environmentSchema.default('production'),
});
export type CreateOrganizationInput = z.infer<typeof createOrganizationSchema>;

/** What creating an organization returns: what `create-org` prints, as JSON. */
export interface CreatedOrganizationView {
  id: string;
  name: string;
  created_at: string;
  /** The organization's default policy (the starter detector set). */
  default_policy_id: string;
  /** The first project (key scope `full`), with its raw key: shown in this response only. */
  project: CreatedProjectView;
}

/** Organizations: created by the operator (ADMIN_API_KEY) or the `create-org` command, never by a project key. */
export class OrganizationService {
  constructor(
    private readonly storage: Storage,
    private readonly projects: ProjectService,
  ) {}

  async create(input: CreateOrganizationInput): Promise<CreatedOrganizationView> {
    const r = await this.storage.dataSource.transaction((m) =>
      provisionOrganization(m, {
        organizationName: input.name,
        projectName: input.project_name ?? `${input.name} project`.slice(0, 200),
        environment: input.environment,
      }),
    );
    const [org] = await this.storage.query<{ name: string; created_at: Date | string }>('SELECT name, created_at FROM organizations WHERE id = $1', [
      r.organizationId,
    ]);
    const project = await this.projects.get(r.organizationId, r.projectId);
    return {
      id: r.organizationId,
      name: org?.name ?? input.name,
      created_at: isoString(org?.created_at ?? new Date()),
      default_policy_id: r.policyId,
      project: { ...project, raw_key: r.rawKey },
    };
  }
}
