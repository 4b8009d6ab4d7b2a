"""Checks the manifests scripts/ci/helm-check.sh rendered: the key objects exist and are wired.

Standalone renders (default, full, secret), cluster renders (cluster: defaults, cluster-full:
everything on, cluster-external: external etcd and a cert-manager certificate), and for every
render: selectors select their pods, services and PDBs have pods, env references come after their
definitions, mounts have volumes, pods run as non-root."""
import os
import re
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
check(not by_kind(default, "PrometheusRule"), "default: no alert rules")
check(not [c for c in by_kind(default, "ConfigMap") if "grafana_dashboard" in c["metadata"]["labels"]],
      "default: no Grafana dashboard")
for docs, name in ((full, "full"), (load(os.path.join(out, "cluster-full.yaml")), "cluster-full")):
    rules = by_kind(docs, "PrometheusRule")
    check(len(rules) == 1, f"{name}: one PrometheusRule")
    alerts = {r["alert"]: r for g in rules[0]["spec"]["groups"] for r in g["rules"]}
    check({"FlashVecDown", "FlashVecNotReady", "FlashVecServerErrors", "FlashVecSlowSearches",
           "FlashVecIndexBacklog", "FlashVecDiskAlmostFull", "FlashVecSlowFsync"} == set(alerts),
          f"{name}: the alerts")
    for a in alerts.values():
        check('job=~"t-flashvec.*"' in a["expr"], f"{name}: {a['alert']} selects the release's job")
        check(a["labels"]["severity"] in ("warning", "critical"), f"{name}: {a['alert']} severity")
        check("{{ $labels.instance }}" in a["annotations"]["summary"], f"{name}: {a['alert']} summary")
    check("> 1000000" in alerts["FlashVecIndexBacklog"]["expr"], f"{name}: backlog threshold")
    dash = [c for c in by_kind(docs, "ConfigMap") if c["metadata"]["labels"].get("grafana_dashboard") == "1"]
    check(len(dash) == 1, f"{name}: a Grafana dashboard ConfigMap for the sidecar")
    import json
    d = json.loads(dash[0]["data"]["flashvec.json"])
    check(d["uid"] == "flashvec" and len([p for p in d["panels"] if p["type"] == "timeseries"]) >= 10,
          f"{name}: the dashboard's panels")
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


# ---------------------------------------------------------------- wiring checks, every render

def pods(docs):
    """(workload, pod template) for every Deployment and StatefulSet."""
    return [(d, d["spec"]["template"]) for d in docs if d["kind"] in ("Deployment", "StatefulSet")]


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def wiring(docs, name):
    templates = [t["metadata"]["labels"] for _, t in pods(docs)]
    for w, t in pods(docs):
        check(matches(w["spec"]["selector"]["matchLabels"], t["metadata"]["labels"]),
              f"{name}: {w['metadata']['name']} selects its own pods")
        for c in t["spec"]["containers"]:
            check(c.get("resources", {}).get("requests"), f"{name}: {w['metadata']['name']} has resources")
            defined = set()
            for e in c.get("env", []):
                for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", str(e.get("value", ""))):
                    check(ref in defined, f"{name}: {w['metadata']['name']} uses $({ref}) before defining it")
                defined.add(e["name"])
            mounts = {m["name"] for m in c.get("volumeMounts", [])}
            vols = {v["name"] for v in t["spec"].get("volumes", [])} | {
                v["metadata"]["name"] for v in w["spec"].get("volumeClaimTemplates", [])}
            check(mounts <= vols, f"{name}: {w['metadata']['name']} mounts only volumes it has ({mounts - vols})")
        check(t["spec"]["securityContext"]["runAsNonRoot"] is True, f"{name}: {w['metadata']['name']} non-root")
    for s in by_kind(docs, "Service"):
        check(any(matches(s["spec"]["selector"], l) for l in templates),
              f"{name}: service {s['metadata']['name']} selects pods")
    for p in by_kind(docs, "PodDisruptionBudget"):
        check(sum(matches(p["spec"]["selector"]["matchLabels"], l) for l in templates) == 1,
              f"{name}: PDB {p['metadata']['name']} covers exactly one workload")
    for i in by_kind(docs, "Ingress"):
        backend = i["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"]
        check(backend in {s["metadata"]["name"] for s in by_kind(docs, "Service")},
              f"{name}: ingress backend {backend} exists")


def named(docs, kind, name):
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    check(len(found) == 1, f"{kind} {name} rendered once")
    return found[0]


def container(w):
    return w["spec"]["template"]["spec"]["containers"][0]


def env(w):
    return {e["name"]: e for e in container(w)["env"]}


renders = {n: load(os.path.join(out, n + ".yaml"))
           for n in ("default", "full", "secret", "budget", "cluster", "cluster-full", "cluster-external",
                     "cluster-budget")}
for n, docs in renders.items():
    wiring(docs, n)

# ---------------------------------------------------------------- mode: cluster, defaults

cl = renders["cluster"]
check(not [d for d in cl if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "t-flashvec"],
      "cluster: no standalone StatefulSet")
proxy = named(cl, "Deployment", "t-flashvec-proxy")
query = named(cl, "StatefulSet", "t-flashvec-query")
index = named(cl, "Deployment", "t-flashvec-index")
etcd = named(cl, "StatefulSet", "t-flashvec-etcd")
check(proxy["spec"]["replicas"] == 2 and query["spec"]["replicas"] == 3
      and index["spec"]["replicas"] == 1 and etcd["spec"]["replicas"] == 3, "cluster: default replicas")
for w, role in ((proxy, "proxy"), (query, "query"), (index, "index")):
    c = container(w)
    e = env(w)
    check(e["FLASHVEC_ROLES"]["value"] == role, f"cluster: {role} role")
    check(e["FLASHVEC_CLUSTER_NODE_ID"]["value"] == "$(POD_NAME)", f"cluster: {role} node id = pod name")
    check(c["readinessProbe"]["httpGet"]["path"] == "/readyz", f"cluster: {role} readiness /readyz")
    check(c["livenessProbe"]["httpGet"]["path"] == "/healthz", f"cluster: {role} liveness /healthz")
    check(c["startupProbe"]["httpGet"]["path"] == "/healthz", f"cluster: {role} startup /healthz")
    check(c["securityContext"]["readOnlyRootFilesystem"] is True
          and any(m["mountPath"] == "/tmp" for m in c["volumeMounts"]), f"cluster: {role} read-only root, /tmp")
    check(not any(k.startswith("FLASHVEC_CLUSTER_TLS") for k in e), f"cluster: {role} no TLS by default")
    check("FLASHVEC_SECURITY_API_KEY" not in e, f"cluster: {role} no API key by default")
check(env(query)["FLASHVEC_CLUSTER_ADVERTISE_HOST"]["value"]
      == "$(POD_NAME).t-flashvec-query-headless.$(POD_NAMESPACE).svc.cluster.local",
      "cluster: query pods advertise their stable DNS name")
check(env(index)["FLASHVEC_CLUSTER_ADVERTISE_HOST"]["value"] == "$(POD_IP)", "cluster: index advertises its IP")
check({p["name"] for p in container(query)["ports"]} == {"http", "grpc"}, "cluster: query ports")
check(query["spec"]["serviceName"] == "t-flashvec-query-headless", "cluster: query headless service")
check(query["spec"]["podManagementPolicy"] == "Parallel", "cluster: query pods start in parallel")
vct = query["spec"]["volumeClaimTemplates"][0]
check(vct["metadata"]["name"] == "data" and vct["spec"]["resources"]["requests"]["storage"] == "100Gi"
      and "storageClassName" not in vct["spec"], "cluster: query PVC, default class")
aff = query["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
pref = aff["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
check(pref["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "query"
      and pref["topologyKey"] == "kubernetes.io/hostname", "cluster: soft anti-affinity of query pods")
hq = named(cl, "Service", "t-flashvec-query-headless")
check(hq["spec"]["clusterIP"] == "None" and hq["spec"]["publishNotReadyAddresses"] is True
      and {p["name"] for p in hq["spec"]["ports"]} == {"http", "grpc"}, "cluster: query headless service")
api = named(cl, "Service", "t-flashvec")
check(api["spec"]["selector"]["app.kubernetes.io/component"] == "proxy", "cluster: REST service -> proxies")
cm = by_kind(cl, "ConfigMap")[0]["data"]
members = cm["FLASHVEC_CLUSTER_ETCD_ENDPOINTS"].split(",")
check(members == ["http://t-flashvec-etcd-%d.t-flashvec-etcd-headless.vec.svc.cluster.local:2379" % i
                  for i in range(3)], "cluster: etcd endpoints = every member")
check(cm["FLASHVEC_CLUSTER_GRPC_PORT"] == "7070" and cm["FLASHVEC_BIND"] == "0.0.0.0", "cluster: config map")
args = container(etcd)["command"]
ic = [a for a in args if a.startswith("--initial-cluster=")][0]
check(ic.count("=http://") == 3, "cluster: etcd initial cluster of 3 members")
check(etcd["spec"]["podManagementPolicy"] == "Parallel", "cluster: etcd members start together")
check(container(etcd)["readinessProbe"]["httpGet"]["path"] == "/health", "cluster: etcd readiness")
check(etcd["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data", "cluster: etcd PVC")
eh = named(cl, "Service", "t-flashvec-etcd-headless")
check(eh["spec"]["publishNotReadyAddresses"] is True, "cluster: etcd peers resolvable before ready")
pdbs = {p["metadata"]["name"]: p["spec"] for p in by_kind(cl, "PodDisruptionBudget")}
check(set(pdbs) == {"t-flashvec-proxy", "t-flashvec-query", "t-flashvec-etcd"}, f"cluster: PDBs {set(pdbs)}")
check(pdbs["t-flashvec-etcd"]["maxUnavailable"] == 1 and pdbs["t-flashvec-query"]["maxUnavailable"] == 1,
      "cluster: PDB budgets")
check(not by_kind(cl, "Ingress") and not by_kind(cl, "ServiceMonitor") and not by_kind(cl, "Secret"),
      "cluster: no optional objects by default")

# ---------------------------------------------------------------- mode: cluster, everything on

cf = renders["cluster-full"]
query = named(cf, "StatefulSet", "t-flashvec-query")
check(query["spec"]["replicas"] == 4, "cluster-full: 4 query nodes")
vct = query["spec"]["volumeClaimTemplates"][0]["spec"]
check(vct["storageClassName"] == "local-nvme" and vct["resources"]["requests"]["storage"] == "500Gi",
      "cluster-full: NVMe storage class and size")
req = query["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][
    "requiredDuringSchedulingIgnoredDuringExecution"][0]
check(req["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "query",
      "cluster-full: hard anti-affinity")
check(named(cf, "StatefulSet", "t-flashvec-etcd")["spec"]["replicas"] == 5, "cluster-full: 5 etcd members")
pdbs = {p["metadata"]["name"]: p["spec"] for p in by_kind(cf, "PodDisruptionBudget")}
check(pdbs["t-flashvec-etcd"]["maxUnavailable"] == 2, "cluster-full: etcd PDB keeps a quorum of 5")
check("t-flashvec-index" in pdbs, "cluster-full: index PDB")
check(named(cf, "Deployment", "t-flashvec-index")["spec"]["replicas"] == 2
      and named(cf, "Deployment", "t-flashvec-proxy")["spec"]["replicas"] == 3, "cluster-full: replicas")
for w in (named(cf, "Deployment", "t-flashvec-proxy"), query, named(cf, "Deployment", "t-flashvec-index")):
    e = env(w)
    n = w["metadata"]["name"]
    check(e["FLASHVEC_CLUSTER_TLS_ENABLED"]["value"] == "true"
          and e["FLASHVEC_CLUSTER_TLS_CERT"]["value"] == "/etc/flashvec/grpc-tls/tls.crt"
          and e["FLASHVEC_CLUSTER_TLS_KEY"]["value"] == "/etc/flashvec/grpc-tls/tls.key"
          and e["FLASHVEC_CLUSTER_TLS_CA"]["value"] == "/etc/flashvec/grpc-tls/ca.crt"
          and e["FLASHVEC_CLUSTER_TLS_CLIENT_AUTH"]["value"] == "require"
          and e["FLASHVEC_CLUSTER_TLS_AUTHORITY"]["value"] == "flashvec-internal", f"cluster-full: {n} TLS env")
    vols = {v["name"]: v for v in w["spec"]["template"]["spec"]["volumes"]}
    check(vols["grpc-tls"]["secret"]["secretName"] == "grpc-certs", f"cluster-full: {n} TLS secret")
    check(any(m["mountPath"] == "/etc/flashvec/grpc-tls" and m.get("readOnly") for m in container(w)["volumeMounts"]),
          f"cluster-full: {n} TLS mount")
    check(e["FLASHVEC_SECURITY_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "t-flashvec-api-key",
          f"cluster-full: {n} API key from the secret")
check(env(query)["JAVA_OPTS"]["value"] == "-Xss1m -XX:+AlwaysPreTouch", "cluster-full: query JAVA_OPTS")
check(env(named(cf, "Deployment", "t-flashvec-proxy"))["JAVA_OPTS"]["value"] == "-Xss1m", "cluster-full: proxy JAVA_OPTS")
ing = by_kind(cf, "Ingress")
check(len(ing) == 1, "cluster-full: ingress")
sm = by_kind(cf, "ServiceMonitor")[0]["spec"]
check(sm["selector"]["matchExpressions"][0]["values"] == ["proxy", "query", "index"], "cluster-full: scrape targets")
scraped = [s for s in by_kind(cf, "Service")
           if s["metadata"]["labels"].get("app.kubernetes.io/component") in ("proxy", "query", "index")]
check(len(scraped) == 3 and all(any(p["name"] == "http" for p in s["spec"]["ports"]) for s in scraped),
      "cluster-full: one scraped service per component, each with an http port")
check(sm["endpoints"][0]["bearerTokenSecret"]["name"] == "t-flashvec-api-key", "cluster-full: scrape with the key")

# ---------------------------------------------------------------- mode: cluster, external etcd, cert-manager

ce = renders["cluster-external"]
check(not [d for d in ce if d["metadata"]["name"].startswith("t-flashvec-etcd")], "external: no bundled etcd")
check(by_kind(ce, "ConfigMap")[0]["data"]["FLASHVEC_CLUSTER_ETCD_ENDPOINTS"]
      == "http://etcd-a:2379,http://etcd-b:2379", "external: etcd endpoints")
check(not [d for d in ce if d["metadata"]["name"].startswith("t-flashvec-index")], "external: index.replicas=0")
check("affinity" not in named(ce, "StatefulSet", "t-flashvec-query")["spec"]["template"]["spec"],
      "external: query antiAffinity none")
check(not by_kind(ce, "PodDisruptionBudget"), "external: PDBs disabled")
cert = by_kind(ce, "Certificate")
check(len(cert) == 1, "external: cert-manager Certificate")
cs = cert[0]["spec"]
check(cs["secretName"] == "t-flashvec-grpc-tls" and "fv.internal" in cs["dnsNames"]
      and cs["privateKey"]["encoding"] == "PKCS8" and cs["issuerRef"]["name"] == "ca-issuer"
      and {"server auth", "client auth"} <= set(cs["usages"]), "external: certificate for mutual TLS, PKCS#8 key")
q = named(ce, "StatefulSet", "t-flashvec-query")
check({v["name"]: v for v in q["spec"]["template"]["spec"]["volumes"]}["grpc-tls"]["secret"]["secretName"]
      == "t-flashvec-grpc-tls", "external: pods mount the certificate's secret")
check(env(q)["FLASHVEC_CLUSTER_TLS_CLIENT_AUTH"]["value"] == "optional"
      and env(q)["FLASHVEC_CLUSTER_TLS_AUTHORITY"]["value"] == "fv.internal", "external: TLS settings")


# ---------------------------------------------------------------- memory budget

def budget_env(w):
    return {e["name"]: e.get("value") for e in container(w)["env"]}.get("FLASHVEC_MEMORY_BUDGET")


for w, _ in pods(default):
    check(budget_env(w) is None, "default: no memory budget: the server takes the pod's limit")
    check(container(w)["resources"]["limits"]["memory"] == "8Gi", "default: the 8Gi limit")
bud = by_kind(load(os.path.join(out, "budget.yaml")), "StatefulSet")[0]
check(budget_env(bud) == "6Gi", "budget: FLASHVEC_MEMORY_BUDGET")
res = container(bud)["resources"]
check(res["limits"]["memory"] == "6Gi" and res["requests"]["memory"] == "6Gi",
      "budget: the budget is the pod's memory request and limit")
check(res["requests"]["cpu"] == "2", "budget: the other requests stay")
cb = load(os.path.join(out, "cluster-budget.yaml"))
q = named(cb, "StatefulSet", "t-flashvec-query")
check(budget_env(q) == "12Gi" and container(q)["resources"]["limits"]["memory"] == "12Gi",
      "cluster-budget: query budget and limit")
i = named(cb, "Deployment", "t-flashvec-index")
check(budget_env(i) == "3Gi" and container(i)["resources"]["requests"]["memory"] == "3Gi",
      "cluster-budget: index budget and request")
p = named(cb, "Deployment", "t-flashvec-proxy")
check(budget_env(p) is None and container(p)["resources"]["limits"]["memory"] == "2Gi",
      "cluster-budget: the proxy keeps its limit")

print("helm_check: %d objects checked in %d renders" % (sum(len(d) for d in renders.values()), len(renders)))
