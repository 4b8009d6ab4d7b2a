"""Checks the manifests scripts/helm-check.sh rendered: the key objects exist and are wired."""
import os
import sys

import yaml


def load(path):
    return [d for d in yaml.safe_load_all(open(path)) if d]


def by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def check(cond, msg):
    if not cond:
        print("helm-check: FAILED: " + msg, file=sys.stderr)
        sys.exit(1)


out = sys.argv[1]
default = load(os.path.join(out, "default.yaml"))
full = load(os.path.join(out, "full.yaml"))
secret = load(os.path.join(out, "secret.yaml"))

for docs, name in ((default, "default"), (full, "full"), (secret, "existingSecret")):
    sts = by_kind(docs, "StatefulSet")
    check(len(sts) == 1, f"{name}: one StatefulSet")
    pod = sts[0]["spec"]["template"]["spec"]
    c = pod["containers"][0]
    check(c["readinessProbe"]["httpGet"]["path"] == "/readyz", f"{name}: readiness on /readyz")
    check(c["livenessProbe"]["httpGet"]["path"] == "/healthz", f"{name}: liveness on /healthz")
    check(pod["securityContext"]["runAsNonRoot"] is True, f"{name}: non-root")
    check(c["volumeMounts"][0]["mountPath"] == "/data", f"{name}: data volume at /data")
    check(sts[0]["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data", f"{name}: PVC")
    check("podAntiAffinity" in pod["affinity"], f"{name}: anti-affinity")
    cms = by_kind(docs, "ConfigMap")
    check(cms and cms[0]["data"]["FLASHVEC_DATA_DIR"] == "/data", f"{name}: config map")
    check(len(by_kind(docs, "Service")) == 2, f"{name}: service + headless service")

check(not by_kind(default, "Ingress"), "default: no ingress")
check(not by_kind(default, "Secret"), "default: no secret")
check(len(by_kind(default, "PodDisruptionBudget")) == 1, "default: a PDB")
check(len(by_kind(full, "Ingress")) == 1, "full: ingress")
check(len(by_kind(full, "ServiceMonitor")) == 1, "full: service monitor")
sts = by_kind(full, "StatefulSet")[0]
check(sts["spec"]["replicas"] == 2, "full: replicas")
check(sts["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] == "local-nvme",
      "full: storage class")
env = {e["name"]: e for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]}
check(env["FLASHVEC_SECURITY_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "t-flashvec-api-key",
      "full: api key from the chart's secret")
sec = by_kind(full, "Secret")
check(sec and sec[0]["stringData"]["api-key"] == "k", "full: secret holds the key")
env = {e["name"]: e for e in by_kind(secret, "StatefulSet")[0]["spec"]["template"]["spec"]["containers"][0]["env"]}
check(env["FLASHVEC_SECURITY_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "mine",
      "existingSecret: api key from the given secret")
check(not by_kind(secret, "Secret"), "existingSecret: no chart secret")
check(not by_kind(secret, "PodDisruptionBudget"), "existingSecret: PDB can be disabled")
print("helm_check: %d objects checked" % (len(default) + len(full) + len(secret)))
