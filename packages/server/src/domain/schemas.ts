import type { components } from '@works-api/api-types';

/** The API's resource shapes, as generated from openapi/api.yaml. */
export type Schemas = components['schemas'];
