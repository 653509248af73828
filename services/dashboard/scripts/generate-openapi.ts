// Writes schemas/openapi-dashboard.yaml from the dashboard's operations and schemas (npm run dashboard:openapi).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DASHBOARD_OPENAPI_FILE, dashboardOpenApiYaml } from '../src/api/openapi.ts';

writeFileSync(DASHBOARD_OPENAPI_FILE, dashboardOpenApiYaml());
process.stdout.write(`wrote ${fileURLToPath(DASHBOARD_OPENAPI_FILE)}\n`);
