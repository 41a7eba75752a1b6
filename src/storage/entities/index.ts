import { OrganizationEntity } from './organization.entity';
import { PolicyEntity } from './policy.entity';
import { ProjectEntity } from './project.entity';
import { SecurityEventEntity } from './security-event.entity';

export { OrganizationEntity, PolicyEntity, ProjectEntity, SecurityEventEntity };
export const ENTITIES = [OrganizationEntity, PolicyEntity, ProjectEntity, SecurityEventEntity];
