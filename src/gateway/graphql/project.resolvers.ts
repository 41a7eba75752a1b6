import { createProjectSchema, listProjectsQuerySchema, updateProjectSchema } from '../../management/projects/project.schemas';
import type { CreatedProjectView, Page, PolicyView, ProjectView } from '../../management/views';
import { afterWrite, parseInput, toQueryParams, type IdArgs, type Resolver } from './resolver-helpers';

/** Projects: each resolver calls the service method its REST route calls; `policy` goes through the DataLoader. */

type ListArgs = {
  limit?: number | null;
  offset?: number | null;
  name?: string | null;
  environment?: string | null;
  is_active?: boolean | null;
  policy_id?: string | null;
};
type InputArgs = { input: unknown };

const projects: Resolver<ListArgs, Page<ProjectView>> = (_p, args, ctx) =>
  ctx.services.projects.list(ctx.organizationId, parseInput(listProjectsQuerySchema, toQueryParams(args)));

const project: Resolver<IdArgs, ProjectView> = (_p, { id }, ctx) => ctx.services.projects.get(ctx.organizationId, id);

const createProject: Resolver<InputArgs, CreatedProjectView> = async (_p, { input }, ctx) =>
  afterWrite(ctx, await ctx.services.projects.create(ctx.actor, parseInput(createProjectSchema, input)));

const updateProject: Resolver<IdArgs & InputArgs, ProjectView> = async (_p, { id, input }, ctx) =>
  afterWrite(ctx, await ctx.services.projects.update(ctx.actor, id, parseInput(updateProjectSchema, input)));

/** REST answers 204; GraphQL returns the deleted id. */
const deleteProject: Resolver<IdArgs, string> = async (_p, { id }, ctx) => {
  await ctx.services.projects.delete(ctx.actor, id);
  return afterWrite(ctx, id);
};

const rotateProjectKey: Resolver<IdArgs, CreatedProjectView> = async (_p, { id }, ctx) =>
  afterWrite(ctx, await ctx.services.projects.rotateKey(ctx.actor, id));

/** The effective policy (assigned, else the organization default), batched per request. */
const policy: Resolver<unknown, PolicyView, ProjectView> = (parent, _a, ctx) => ctx.loaders.policy.load(parent.policy_id);

export const projectResolvers = {
  Query: { projects, project },
  Mutation: { createProject, updateProject, deleteProject, rotateProjectKey },
  Project: { policy },
  CreatedProject: { policy },
};
