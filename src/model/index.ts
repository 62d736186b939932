/**
 * `agentv-results/schemas`: the zod schemas of every input row and artifact we read or write, and
 * their JSON Schemas. Types come from the schemas, so validating with them and typing with them
 * cannot disagree.
 *
 * @module agentv-results/schemas
 */
export * from './input-row.js';
export * from './artifacts.js';
export * from './grading.js';
export { SCHEMAS, jsonSchema } from './json-schema.js';
