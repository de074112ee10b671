#!/usr/bin/env bash
# `npm run check:deploy`: lints the Dockerfile, validates the compose file against the Compose Specification, checks
# that the Helm values carry exactly the configuration table, lints and renders the chart with several value sets
# and validates every rendered manifest against the Kubernetes JSON schemas (strict: unknown fields fail) with
# kubernetes-validate, the PyPI tool that ships those schemas (generated from Kubernetes' OpenAPI) for each release.
# Then it runs them (issue 37; root and podman needed, installed by scripts/deploy/podman.sh): run-image.sh builds the
# image with podman from a debootstrap base and crawls a fixture site with it; run-compose.sh brings up compose.yaml
# with its stand-ins and crawls through it. TRAWL_DEPLOY_RUN=lint stops after the static checks, =image after the image.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
bash scripts/deploy/tools.sh
export PATH="$ROOT/node_modules/.bin:$ROOT/.tools/bin:$ROOT/.venv/bin:$PATH"  # node_modules/.bin: Node 24 (the node devDependency)
K8S_VERSION=1.33.0

echo "[deploy] hadolint deploy/Dockerfile"
hadolint --failure-threshold info deploy/Dockerfile
echo "[deploy] hadolint the Containerfiles of the run checks (Node base, compose stand-ins)"
hadolint --failure-threshold info scripts/deploy/node.Containerfile deploy/standins/*.Containerfile

echo "[deploy] compose schema"
node scripts/deploy/check-compose.ts deploy/compose.yaml

echo "[deploy] helm values vs the configuration table"
node scripts/gen-helm-config.ts --check
echo "[deploy] compose services, image ENV and chart values/templates vs the configuration table (names and values)"
vitest run --project unit scripts/deploy/deploy-env.test.ts scripts/gen-helm-config.test.ts

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# the value sets rendered: defaults (external Kafka/ClickHouse), dev, and every optional part on
cat > "$out/all-on.values.yaml" <<'YAML'
ingress: { enabled: true, className: nginx, tls: [{ secretName: trawl-tls, hosts: [trawl.example.com] }] }
clickhouseCa: { secret: clickhouse-ca }
tlsFilesSecret: trawl-kafka-tls
roles:
  api: { autoscaling: { enabled: true } }
  fetch-render: { autoscaling: { enabled: true } }
  convert: { autoscaling: { enabled: true } }
  render: { enabled: true, autoscaling: { enabled: true } }
YAML
for set in default dev all-on; do
  case $set in
    default) args=() ;;
    dev) args=(-f helm/trawl/values-dev.yaml) ;;
    all-on) args=(-f "$out/all-on.values.yaml") ;;
  esac
  echo "[deploy] helm lint + template ($set)"
  helm lint --strict helm/trawl "${args[@]}" >"$out/lint.txt" || { cat "$out/lint.txt"; exit 1; }
  helm template trawl helm/trawl "${args[@]}" >"$out/$set.yaml"
  kubernetes-validate --strict --quiet -k "$K8S_VERSION" "$out/$set.yaml"
  echo "[deploy] $(grep -c '^kind:' "$out/$set.yaml") manifests valid against the Kubernetes $K8S_VERSION schemas"
  node scripts/deploy/check-rendered-config.ts <"$out/$set.yaml"
done
case "${TRAWL_DEPLOY_RUN:-all}" in
  lint) ;;
  image) bash scripts/deploy/run-image.sh ;;
  *) bash scripts/deploy/run-image.sh && bash scripts/deploy/run-compose.sh ;;
esac
echo "[deploy] ok"
