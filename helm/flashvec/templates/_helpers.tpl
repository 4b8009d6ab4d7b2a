{{- define "flashvec.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "flashvec.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "flashvec.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector of one cluster component: (dict "ctx" $ "component" "query") */}}
{{- define "flashvec.componentSelector" -}}
{{ include "flashvec.selector" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "flashvec.secretName" -}}
{{- if .Values.apiKey.existingSecret -}}{{ .Values.apiKey.existingSecret }}{{- else -}}{{ include "flashvec.fullname" . }}-api-key{{- end -}}
{{- end -}}

{{- define "flashvec.tlsSecretName" -}}
{{- if .Values.cluster.tls.existingSecret -}}{{ .Values.cluster.tls.existingSecret }}{{- else -}}{{ include "flashvec.fullname" . }}-grpc-tls{{- end -}}
{{- end -}}

{{- define "flashvec.image" -}}
"{{ .Values.image.repository }}:{{ .Values.image.tag }}"
{{- end -}}

{{/* The etcd client URLs FlashVec pods use: every bundled member, or etcd.endpoints. */}}
{{- define "flashvec.etcdEndpoints" -}}
{{- if .Values.etcd.enabled -}}
{{- $name := printf "%s-etcd" (include "flashvec.fullname" .) -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $urls = append $urls (printf "http://%s-%d.%s-headless.%s.svc.%s:2379" $name $i $name $.Release.Namespace $.Values.cluster.clusterDomain) -}}
{{- end -}}
{{- join "," $urls -}}
{{- else -}}
{{- join "," .Values.etcd.endpoints -}}
{{- end -}}
{{- end -}}

{{/*
Input checks: every bad value stops the render with the value named (helm install/template fail).
Included once, from configmap.yaml.
*/}}
{{- define "flashvec.validate" -}}
{{- range $name, $budget := dict "memory.budget" .Values.memory.budget "proxy.memory.budget" .Values.proxy.memory.budget "query.memory.budget" .Values.query.memory.budget "index.memory.budget" .Values.index.memory.budget -}}
{{- if and $budget (not (regexMatch "^[1-9][0-9]*(Ki|Mi|Gi|Ti|k|M|G|T)?$" (toString $budget))) -}}
{{- fail (printf "%s must be a Kubernetes memory quantity such as 768Mi or 8Gi (got %v)" $name $budget) -}}
{{- end -}}
{{- end -}}
{{- if not (has .Values.mode (list "standalone" "cluster")) -}}
{{- fail (printf "mode must be standalone or cluster (got %v)" .Values.mode) -}}
{{- end -}}
{{- if and .Values.apiKey.enabled (not .Values.apiKey.existingSecret) (not .Values.apiKey.value) -}}
{{- fail "apiKey.enabled needs apiKey.value or apiKey.existingSecret" -}}
{{- end -}}
{{- if eq .Values.mode "cluster" -}}
{{- if lt (int .Values.query.replicas) 1 -}}
{{- fail (printf "query.replicas must be at least 1 (got %v)" .Values.query.replicas) -}}
{{- end -}}
{{- if lt (int .Values.proxy.replicas) 1 -}}
{{- fail (printf "proxy.replicas must be at least 1 (got %v)" .Values.proxy.replicas) -}}
{{- end -}}
{{- if lt (int .Values.index.replicas) 0 -}}
{{- fail (printf "index.replicas must be 0 or more (got %v)" .Values.index.replicas) -}}
{{- end -}}
{{- if not (has .Values.query.antiAffinity (list "soft" "hard" "none")) -}}
{{- fail (printf "query.antiAffinity must be soft, hard or none (got %v)" .Values.query.antiAffinity) -}}
{{- end -}}
{{- if .Values.etcd.enabled -}}
{{- if or (lt (int .Values.etcd.replicas) 1) (eq (mod (int .Values.etcd.replicas) 2) 0) -}}
{{- fail (printf "etcd.replicas must be odd: 1, 3 or 5 (got %v)" .Values.etcd.replicas) -}}
{{- end -}}
{{- else if not .Values.etcd.endpoints -}}
{{- fail "etcd.enabled=false needs etcd.endpoints (the URLs of your etcd, e.g. http://etcd:2379)" -}}
{{- end -}}
{{- if .Values.cluster.tls.enabled -}}
{{- if and (not .Values.cluster.tls.existingSecret) (not .Values.cluster.tls.certManager.enabled) -}}
{{- fail "cluster.tls.enabled needs cluster.tls.existingSecret (tls.crt, tls.key, ca.crt) or cluster.tls.certManager.enabled" -}}
{{- end -}}
{{- if and .Values.cluster.tls.certManager.enabled (not .Values.cluster.tls.certManager.issuerRef.name) -}}
{{- fail "cluster.tls.certManager.enabled needs cluster.tls.certManager.issuerRef.name (an Issuer or ClusterIssuer that signs with a CA, so ca.crt is filled)" -}}
{{- end -}}
{{- if not (has .Values.cluster.tls.clientAuth (list "require" "optional" "none")) -}}
{{- fail (printf "cluster.tls.clientAuth must be require, optional or none (got %v)" .Values.cluster.tls.clientAuth) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The pod-level settings every FlashVec pod shares (security context, pull secrets). */}}
{{- define "flashvec.podCommon" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
A FlashVec container: (dict "ctx" $ "role" "query" "javaOpts" "..." "resources" {...} "env" [...]
"budget" "8Gi"). A budget becomes FLASHVEC_MEMORY_BUDGET and the container's memory request and
limit; without one the server's budget is the container's memory limit.
Probes: readiness /readyz (recovered and, in cluster mode, joined), liveness and start-up /healthz.
*/}}
{{- define "flashvec.container" -}}
{{- $ := .ctx -}}
{{- $resources := deepCopy (.resources | default dict) -}}
{{- if .budget -}}
{{- /* the memory budget is the pod's memory: requested and the limit (page cache included) */ -}}
{{- $limits := deepCopy ($resources.limits | default dict) -}}
{{- $requests := deepCopy ($resources.requests | default dict) -}}
{{- $_ := set $limits "memory" .budget -}}
{{- $_ := set $requests "memory" .budget -}}
{{- $_ := set $resources "limits" $limits -}}
{{- $_ := set $resources "requests" $requests -}}
{{- end -}}
- name: flashvec
  image: {{ include "flashvec.image" $ }}
  imagePullPolicy: {{ $.Values.image.pullPolicy }}
  securityContext:
    {{- toYaml $.Values.containerSecurityContext | nindent 4 }}
  ports:
    - name: http
      containerPort: {{ $.Values.service.port }}
    {{- if has .role (list "query" "index") }}
    - name: grpc
      containerPort: {{ $.Values.cluster.grpcPort }}
    {{- end }}
  envFrom:
    - configMapRef:
        name: {{ include "flashvec.fullname" $ }}
  env:
    {{- if .role }}
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: POD_NAMESPACE
      valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
    - name: POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    - name: FLASHVEC_ROLES
      value: {{ .role }}
    - name: FLASHVEC_CLUSTER_NODE_ID
      value: $(POD_NAME)
    {{- end }}
    {{- with .env }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- if .budget }}
    - name: FLASHVEC_MEMORY_BUDGET
      value: {{ .budget | quote }}
    {{- end }}
    - name: JAVA_OPTS
      value: {{ trim (printf "%s %s" $.Values.javaOpts (.javaOpts | default "")) | quote }}
    {{- if $.Values.apiKey.enabled }}
    - name: FLASHVEC_SECURITY_API_KEY
      valueFrom:
        secretKeyRef:
          name: {{ include "flashvec.secretName" $ }}
          key: api-key
    - name: FLASHVEC_SECURITY_READ_ONLY_API_KEY
      valueFrom:
        secretKeyRef:
          name: {{ include "flashvec.secretName" $ }}
          key: read-only-api-key
          optional: true
    {{- end }}
    {{- if and .role $.Values.cluster.tls.enabled }}
    - name: FLASHVEC_CLUSTER_TLS_ENABLED
      value: "true"
    - name: FLASHVEC_CLUSTER_TLS_CERT
      value: /etc/flashvec/grpc-tls/tls.crt
    - name: FLASHVEC_CLUSTER_TLS_KEY
      value: /etc/flashvec/grpc-tls/tls.key
    - name: FLASHVEC_CLUSTER_TLS_CA
      value: /etc/flashvec/grpc-tls/ca.crt
    - name: FLASHVEC_CLUSTER_TLS_CLIENT_AUTH
      value: {{ $.Values.cluster.tls.clientAuth | quote }}
    - name: FLASHVEC_CLUSTER_TLS_AUTHORITY
      value: {{ $.Values.cluster.tls.authority | quote }}
    - name: FLASHVEC_CLUSTER_TLS_RELOAD_INTERVAL
      value: {{ $.Values.cluster.tls.reloadInterval | quote }}
    {{- end }}
  readinessProbe:
    httpGet: {path: /readyz, port: http}
    periodSeconds: 5
    failureThreshold: 3
  livenessProbe:
    httpGet: {path: /healthz, port: http}
    periodSeconds: 10
    failureThreshold: 6
  startupProbe:
    httpGet: {path: /healthz, port: http}
    periodSeconds: 2
    failureThreshold: 90
  resources:
    {{- toYaml $resources | nindent 4 }}
  volumeMounts:
    - name: data
      mountPath: /data
    - name: tmp
      mountPath: /tmp
    {{- if and .role $.Values.cluster.tls.enabled }}
    - name: grpc-tls
      mountPath: /etc/flashvec/grpc-tls
      readOnly: true
    {{- end }}
{{- end -}}

{{/* Volumes of a FlashVec pod besides `data`: /tmp, and the gRPC TLS Secret in cluster mode. */}}
{{- define "flashvec.volumes" -}}
- name: tmp
  emptyDir: {}
{{- if and (eq .Values.mode "cluster") .Values.cluster.tls.enabled }}
- name: grpc-tls
  secret:
    secretName: {{ include "flashvec.tlsSecretName" . }}
{{- end }}
{{- end -}}

{{/* Preferred spreading of a component's pods over nodes: (dict "ctx" $ "component" "proxy"). */}}
{{- define "flashvec.spread" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "flashvec.componentSelector" . | nindent 12 }}
{{- end -}}
