# The Tally image: the gateway (and, as they arrive, the consumers) run from the TypeScript sources with tsx.
# The dashboard's web app is built in a stage of its own, with the dev dependencies that build it (Vite);
# only its dist/ goes into the image.
FROM node:20.19-bookworm-slim AS web
WORKDIR /app
COPY . .
RUN npm ci --ignore-scripts && npm run build:web

FROM node:20.19-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production TALLY_DATA_DIR=/data
COPY package.json package-lock.json ./
COPY packages/contract/package.json packages/contract/
COPY packages/config/package.json packages/config/
COPY packages/log/package.json packages/log/
COPY packages/tokens/package.json packages/tokens/
COPY packages/cli/package.json packages/cli/
COPY packages/warehouse/package.json packages/warehouse/
COPY packages/core/package.json packages/core/
COPY packages/react/package.json packages/react/
COPY packages/revenue/package.json packages/revenue/
COPY services/gateway/package.json services/gateway/
COPY services/analytics-consumer/package.json services/analytics-consumer/
COPY services/revenue-consumer/package.json services/revenue-consumer/
COPY services/embedded/package.json services/embedded/
COPY packages/dashboard-store/package.json packages/dashboard-store/
COPY services/dashboard/package.json services/dashboard/
COPY services/dashboard/web/package.json services/dashboard/web/
RUN npm ci --omit=dev --ignore-scripts=false && npm cache clean --force
COPY packages packages
COPY services services
COPY --from=web /app/services/dashboard/web/dist services/dashboard/web/dist
COPY schemas schemas
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080 8081 8082
# The gateway by default; the consumers run from the same image with another command (docker-compose.yml).
CMD ["node", "--import", "tsx", "services/gateway/src/main.ts"]
