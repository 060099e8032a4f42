# One image for every service of the stack; compose.yaml picks the service by command.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY protos protos
COPY bridge bridge
COPY mock-cell mock-cell
COPY router router
COPY mock-gitaly mock-gitaly
COPY stack stack
COPY bench bench
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/protos protos
ENV NODE_ENV=production
USER node
