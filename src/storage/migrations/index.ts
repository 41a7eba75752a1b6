import { InitialSchema1763800000000 } from './1763800000000-initial-schema';

/** Every migration, in order. New migrations are appended here (no glob loading: works from src and dist alike). */
export const MIGRATIONS = [InitialSchema1763800000000];
