# The Tally image: the compiled JavaScript of every package and service on Node.js 24 (LTS). The build
# stage installs the dev dependencies and compiles (npm run build: src/ → dist/); the runtime stage has the
# production dependencies, the dist/ files (the dashboard's web app among them, built by Vite in the build
# stage) and the schemas the code reads at run time, and no TypeScript.
# The Node.js version is infra/versions.env's NODE_24_VERSION (test/compose.test.ts checks it), the release
# CI runs the whole suite on.
FROM node:24.21.0-bookworm-slim AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
# Every workspace's manifest, so that npm ci links them all (test/compose.test.ts checks the list).
COPY packages/backoff/package.json packages/backoff/
COPY packages/cli/package.json packages/cli/
COPY packages/config/package.json packages/config/
COPY packages/consumer/package.json packages/consumer/
COPY packages/contract/package.json packages/contract/
COPY packages/core/package.json packages/core/
COPY packages/log/package.json packages/log/
COPY packages/mail/package.json packages/mail/
COPY packages/react/package.json packages/react/
COPY packages/reports/package.json packages/reports/
COPY packages/revenue/package.json packages/revenue/
COPY packages/service/package.json packages/service/
COPY packages/state-files/package.json packages/state-files/
COPY packages/state-store/package.json packages/state-store/
COPY packages/tokens/package.json packages/tokens/
COPY packages/warehouse/package.json packages/warehouse/
COPY packages/warehouse-http/package.json packages/warehouse-http/
COPY services/analytics-consumer/package.json services/analytics-consumer/
COPY services/embedded/package.json services/embedded/
COPY services/dashboard/package.json services/dashboard/
COPY services/dashboard/web/package.json services/dashboard/web/
COPY services/gateway/package.json services/gateway/
COPY services/revenue-consumer/package.json services/revenue-consumer/
# The CLI's bin/ too: npm ci links `tally` into node_modules/.bin only if its file is there.
COPY packages/cli/bin packages/cli/bin

FROM manifests AS build
# Compiling needs the packages' types, not their native binaries: no install scripts here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json tsconfig.package.json tsconfig.build.json ./
COPY scripts scripts
COPY packages packages
COPY services services
RUN npm run build
# What the runtime needs of each workspace: its compiled modules (without declarations).
RUN for dir in packages/* services/* services/dashboard/web; do \
      mkdir -p "/out/$dir" && cp -r "$dir/dist" "/out/$dir/"; \
    done && \
    find /out -name '*.d.ts' -delete && find /out -name '.tsbuildinfo' -delete

FROM manifests AS runtime
ENV NODE_ENV=production TALLY_DATA_DIR=/data
RUN npm ci --omit=dev --ignore-scripts=false --no-audit --no-fund && npm cache clean --force
COPY --from=build /out/ ./
COPY schemas schemas
# Tally runs as the unprivileged user node (uid 1000); its data directory is that user's alone (0700), and
# a named volume mounted there starts with this owner and mode.
RUN install -d -o node -g node -m 0700 /data
USER node
VOLUME /data
EXPOSE 8080 8081 8082
# The gateway by default; the consumers run from the same image with another command (docker-compose.yml).
# --max-semi-space-size=8: V8's young generation of every gateway thread (semi-spaces of 8 MiB; a V8 flag
# is the process's, so it sets the loops' worker threads too). Left to itself V8 sizes it by the memory
# it sees: semi-spaces of up to 64 MiB on a large machine (memory held for objects that live
# milliseconds), a new space of 2 MiB in a container of 150 MiB (a request's objects promoted, ~70% more
# CPU per request). Measured in BENCHMARKS.md (2026-11-28, "The young generation set in the image's
# command"). A flag cannot be set from inside the process: run the compiled gateway elsewhere with it too.
CMD ["node", "--max-semi-space-size=8", "services/gateway/dist/main.js"]
