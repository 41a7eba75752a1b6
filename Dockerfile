# One image, three roles: the command picks the service (all | detection | gateway | sensor).
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
# .npmrc: onnxruntime-node-install=skip (its CPU binaries ship in the package; nothing is downloaded).
COPY package.json package-lock.json .npmrc ./
# npm ci runs the prepare script (scripts/build.js --prepare): with no src/ yet it has nothing to build.
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY proto ./proto
COPY schema ./schema
COPY src ./src
# Compile, and write the embedded database's template (dist/pglite-template-<version>/: the first start
# copies it instead of running initdb). onnxruntime-node ships binaries for every platform (~290 MB):
# keep this image's own.
RUN node scripts/build.js --prepare && npm prune --omit=dev \
  && find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 2 -maxdepth 2 -type d ! -path "*/$(node -p 'process.platform + "/" + process.arch')" -exec rm -rf {} +

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0
# glibc malloc: two arenas instead of eight per core, and a fixed 128 KB mmap threshold (glibc raises it
# after a large buffer is freed and keeps later ones on a heap it never returns). Measured with
# `npm run bench:perf`: ~15 MB less after start, ~60–90 MB less right after the benchmark and ~20–35 MB
# less at rest (README, "Start-up and memory").
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY proto ./proto
COPY schema ./schema
# The web console (GET /console): built output, committed (docs/console.md).
COPY console/dist ./console/dist
# The embedded database and the audit spool live in DATA_DIR (/app/data): owned by the unprivileged
# user the image runs as. Mount a volume there to keep them across container restarts.
RUN mkdir -p /app/data && chown node:node /app/data
ENV DATA_DIR=/app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080 8081 50051
# --heap-growing-percent=30: every thread's V8 heap grows to 1.3× what is live before its next full
# collection instead of up to 4×; about 150–190 MB less right after `npm run bench:perf`, CPU per request
# within its run-to-run spread (13% higher under bench:memory's shorter load). npm start runs node with the same flag and malloc settings (tools/start-settings.ts).
ENTRYPOINT ["node", "--heap-growing-percent=30", "dist/main.js"]
CMD ["all"]
