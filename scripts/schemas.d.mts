/** Types of scripts/schemas.mjs (the JSON Schema generator), for the test that checks the committed schemas. */
export declare const SCHEMAS: Record<string, { path: string; type: string }>;
export declare function generateSchema(output: string): string;
