#!/usr/bin/env bash
# Lints and renders the Helm chart with several value sets and checks the rendered objects
# (no Kubernetes cluster can run here). Builds helm into .tools/ from the Go module proxy once.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELM="$ROOT/.tools/helm"
CHART="$ROOT/helm/flashvec"
if [ ! -x "$HELM" ]; then
  command -v go >/dev/null || { echo "helm-check: Go is needed to build helm" >&2; exit 1; }
  echo "helm-check: building helm v3.22.0 into .tools (a few minutes, once)" >&2
  mkdir -p "$ROOT/.tools"
  GOBIN="$ROOT/.tools" go install helm.sh/helm/v3/cmd/helm@v3.22.0 ||
    GOBIN="$ROOT/.tools" go install helm.sh/helm/v3/cmd/helm@v3.22.0
fi
PY="${FLASHVEC_QDRANT_PYTHON:-python3}"
"$PY" -c "import yaml" 2>/dev/null || {
  python3 -m venv "$ROOT/.tools/pyenv" >/dev/null 2>&1 || true
  "$ROOT/.tools/pyenv/bin/pip" install -q pyyaml
  PY="$ROOT/.tools/pyenv/bin/python"
}
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
"$HELM" lint --strict "$CHART"
"$HELM" template t "$CHART" >"$OUT/default.yaml"
"$HELM" template t "$CHART" --set ingress.enabled=true --set apiKey.enabled=true \
  --set apiKey.value=k --set apiKey.readOnlyValue=r --set serviceMonitor.enabled=true \
  --set persistence.storageClass=local-nvme --set replicas=2 >"$OUT/full.yaml"
"$HELM" template t "$CHART" --set apiKey.enabled=true --set apiKey.existingSecret=mine \
  --set podDisruptionBudget.enabled=false >"$OUT/secret.yaml"
if "$HELM" template t "$CHART" --set apiKey.enabled=true >"$OUT/bad.yaml" 2>"$OUT/bad.err"; then
  echo "helm-check: apiKey.enabled without a key must fail to render" >&2; exit 1
fi
"$PY" "$ROOT/scripts/helm_check.py" "$OUT"
echo "helm-check: ok"
