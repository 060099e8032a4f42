# One image for every service of the stack; compose.yaml picks the service by its command.
# In the world the base is the public Node.js image; where no registry answers, scripts/build-images.sh
# builds a local one (debootstrap + git + OpenSSH + Node.js 20) and passes it as BASE_IMAGE.
ARG BASE_IMAGE=node:20-bookworm-slim

FROM ${BASE_IMAGE} AS build
LABEL org.gitlab-cells-ssh.image=build
# Set by scripts/build-images.sh only where outbound HTTPS is trusted through the host's CA bundle
# (mounted read-only for the build, never copied into a layer); empty elsewhere.
ARG NODE_EXTRA_CA_CERTS=
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
# Everything else that .dockerignore lets through (sources, protos, test helpers the build imports).
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund --loglevel=error

FROM ${BASE_IMAGE}
LABEL org.gitlab-cells-ssh.image=project
# git for mock Gitaly (upload-pack, receive-pack, upload-archive) and for the client; OpenSSH for the
# client and ssh-keygen (compose init). The local base already has them, node:20-bookworm-slim has not.
RUN if ! command -v git >/dev/null || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then \
      apt-get update \
      && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
      && rm -rf /var/lib/apt/lists/*; \
    fi
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/protos protos
# the demo topology file (the compose init's default STACK_TOPOLOGY) and the schemas it is checked against
COPY --from=build /app/topologies topologies
COPY --from=build /app/schemas schemas
ENV NODE_ENV=production
# Non-root: uid 1000 (`node`), as in the public Node.js image; the compose init chowns /data to it.
USER node
# Each service's own check: the addresses in its config answer (stack/compose-health.ts);
# compose.yaml repeats it per service with its timings.
HEALTHCHECK --interval=5s --timeout=10s --start-period=30s --retries=5 \
  CMD ["node", "dist/stack/compose-health.js"]
CMD ["node", "dist/stack/main.js"]
