// Writes schemas/openapi.yaml (the OpenAPI 3.1 document of POST /api/ingest) from the contract.
import { writeFileSync } from 'node:fs';
import { OPENAPI_FILE, openApiYaml } from '../src/openapi.ts';

writeFileSync(OPENAPI_FILE, openApiYaml());
console.log('wrote schemas/openapi.yaml');
