import { AuditDeadLetterEntity } from './audit-dead-letter.entity';
import { ManagementEventEntity } from './management-event.entity';
import { OrganizationEntity } from './organization.entity';
import { PolicyEntity } from './policy.entity';
import { ProjectEntity } from './project.entity';
import { ResponseOwnerEntity } from './response-owner.entity';
import { SecurityEventEntity } from './security-event.entity';

export { AuditDeadLetterEntity, ManagementEventEntity, OrganizationEntity, PolicyEntity, ProjectEntity, ResponseOwnerEntity, SecurityEventEntity };
export const ENTITIES = [AuditDeadLetterEntity, ManagementEventEntity, OrganizationEntity, PolicyEntity, ProjectEntity, ResponseOwnerEntity, SecurityEventEntity];
