#!/usr/bin/env bash
# Lints and renders the Helm chart with several value sets (standalone and cluster), checks that bad
# values fail with their message, validates every rendered manifest against the Kubernetes 1.34
# JSON schemas (kubeconform, strict), and checks the key objects (scripts/ci/helm_check.py). No
# Kubernetes cluster can run here. Tools are built or installed once into .tools/ (git-ignored):
# helm and kubeconform from the Go module proxy, the schemas from PyPI's kubernetes-validate.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="$ROOT/.tools"
HELM="$TOOLS/helm"
KUBECONFORM="$TOOLS/kubeconform"
K8S_VERSION=1.34.0
SCHEMAS="$TOOLS/k8s-schemas"
CHART="$ROOT/helm/flashvec"
mkdir -p "$TOOLS"

go_install() { # go_install <binary> <module@version>: a first attempt can time out on the proxy
  [ -x "$TOOLS/$1" ] && return 0
  command -v go >/dev/null || { echo "helm-check: Go is needed to build $1" >&2; exit 1; }
  echo "helm-check: building $2 into .tools (once)" >&2
  GOBIN="$TOOLS" go install "$2" || GOBIN="$TOOLS" go install "$2"
}
go_install helm helm.sh/helm/v3/cmd/helm@v3.22.0
go_install kubeconform github.com/yannh/kubeconform/cmd/kubeconform@v0.7.0

PY="${FLASHVEC_QDRANT_PYTHON:-$TOOLS/pyenv/bin/python}"
[ -x "$PY" ] || { python3 -m venv "$TOOLS/pyenv" && PY="$TOOLS/pyenv/bin/python"; }
"$PY" -c "import yaml" 2>/dev/null || "$PY" -m pip install -q pyyaml
if [ ! -f "$SCHEMAS/v$K8S_VERSION-standalone-strict/deployment-apps-v1.json" ]; then
  "$PY" -c "import kubernetes_validate" 2>/dev/null || "$PY" -m pip install -q "kubernetes-validate==1.37.0"
  "$PY" "$ROOT/scripts/ci/k8s-schemas-standalone.py" "$SCHEMAS" "$K8S_VERSION" >/dev/null
fi

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
render() { # render <name> [--set ...]: renders into $OUT/<name>.yaml
  local name="$1"
  shift
  "$HELM" template t "$CHART" --namespace vec "$@" >"$OUT/$name.yaml"
}
"$HELM" lint --strict "$CHART"
"$HELM" lint --strict "$CHART" --set mode=cluster
render default
render full --set ingress.enabled=true --set apiKey.enabled=true \
  --set apiKey.value=k --set apiKey.readOnlyValue=r --set serviceMonitor.enabled=true \
  --set prometheusRule.enabled=true --set grafanaDashboard.enabled=true \
  --set persistence.storageClass=local-nvme --set replicas=2
render budget --set memory.budget=6Gi
render cluster-budget --set mode=cluster --set query.memory.budget=12Gi --set index.memory.budget=3Gi
render secret --set apiKey.enabled=true --set apiKey.existingSecret=mine \
  --set podDisruptionBudget.enabled=false
render cluster --set mode=cluster
render cluster-full --set mode=cluster --set ingress.enabled=true --set serviceMonitor.enabled=true \
  --set prometheusRule.enabled=true --set grafanaDashboard.enabled=true \
  --set apiKey.enabled=true --set apiKey.value=k \
  --set cluster.tls.enabled=true --set cluster.tls.existingSecret=grpc-certs \
  --set query.replicas=4 --set query.persistence.storageClass=local-nvme --set query.persistence.size=500Gi \
  --set query.antiAffinity=hard --set proxy.replicas=3 --set index.replicas=2 \
  --set index.podDisruptionBudget.enabled=true --set etcd.replicas=5 --set javaOpts=-Xss1m \
  --set query.javaOpts=-XX:+AlwaysPreTouch
render cluster-external --set mode=cluster --set etcd.enabled=false \
  --set 'etcd.endpoints={http://etcd-a:2379,http://etcd-b:2379}' --set index.replicas=0 \
  --set query.antiAffinity=none --set proxy.podDisruptionBudget.enabled=false \
  --set query.podDisruptionBudget.enabled=false --set cluster.tls.enabled=true \
  --set cluster.tls.certManager.enabled=true --set cluster.tls.certManager.issuerRef.name=ca-issuer \
  --set cluster.tls.clientAuth=optional --set cluster.tls.authority=fv.internal

# Bad values stop the render and name the value.
expect_fail() { # expect_fail <message> [--set ...]
  local want="$1"
  shift
  if "$HELM" template t "$CHART" "$@" >/dev/null 2>"$OUT/err"; then
    echo "helm-check: FAILED: rendering with $* should fail with: $want" >&2
    exit 1
  fi
  grep -qF -- "$want" "$OUT/err" || {
    echo "helm-check: FAILED: rendering with $* failed without '$want':" >&2
    cat "$OUT/err" >&2
    exit 1
  }
}
expect_fail "apiKey.enabled needs apiKey.value or apiKey.existingSecret" --set apiKey.enabled=true
expect_fail "mode must be standalone or cluster (got distributed)" --set mode=distributed
expect_fail "memory.budget must be a Kubernetes memory quantity such as 768Mi or 8Gi (got lots)" \
  --set memory.budget=lots
expect_fail "query.memory.budget must be a Kubernetes memory quantity such as 768Mi or 8Gi (got 1.5Gi)" \
  --set mode=cluster --set query.memory.budget=1.5Gi
expect_fail "etcd.replicas must be odd: 1, 3 or 5 (got 2)" --set mode=cluster --set etcd.replicas=2
expect_fail "etcd.enabled=false needs etcd.endpoints" --set mode=cluster --set etcd.enabled=false
expect_fail "query.replicas must be at least 1 (got 0)" --set mode=cluster --set query.replicas=0
expect_fail "query.antiAffinity must be soft, hard or none (got always)" --set mode=cluster \
  --set query.antiAffinity=always
expect_fail "cluster.tls.enabled needs cluster.tls.existingSecret" --set mode=cluster \
  --set cluster.tls.enabled=true
expect_fail "cluster.tls.certManager.enabled needs cluster.tls.certManager.issuerRef.name" \
  --set mode=cluster --set cluster.tls.enabled=true --set cluster.tls.certManager.enabled=true
expect_fail "cluster.tls.clientAuth must be require, optional or none (got mutual)" --set mode=cluster \
  --set cluster.tls.enabled=true --set cluster.tls.existingSecret=s --set cluster.tls.clientAuth=mutual

# Every rendered object against the Kubernetes schemas (strict: unknown fields are errors). The
# Prometheus Operator and cert-manager CRDs have no schema here; helm_check.py checks those. The
# metrics the alerts and the Grafana dashboard use are checked against a running server by
# MonitoringChartIT.
"$KUBECONFORM" -strict -summary -kubernetes-version "$K8S_VERSION" \
  -skip ServiceMonitor,PrometheusRule,Certificate \
  -schema-location "$SCHEMAS/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
  "$OUT"/*.yaml
"$PY" "$ROOT/scripts/ci/helm_check.py" "$OUT"
echo "helm-check: ok"
