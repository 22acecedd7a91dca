{{/*
Names, labels, images and the small pieces every component template shares.
*/}}

{{/* Chart name, truncated to the 63 characters a DNS label allows. */}}
{{- define "weaverbird.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Release-scoped base name (63 characters at most). A release whose name already contains the
chart name is used as is, so `helm install weaverbird .` gives weaverbird-orchestrator, not
weaverbird-weaverbird-orchestrator.
*/}}
{{- define "weaverbird.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of one component's objects: <fullname>-<component>, kept within 63 characters. */}}
{{- define "weaverbird.componentName" -}}
{{- $suffix := printf "-%s" .component }}
{{- $base := include "weaverbird.fullname" .root | trunc (int (sub 63 (len $suffix))) | trimSuffix "-" }}
{{- printf "%s%s" $base $suffix }}
{{- end }}

{{- define "weaverbird.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels: the minimal, immutable set a Deployment, Service, PDB or NetworkPolicy selects on.
Call with (dict "root" $ "component" "orchestrator").
*/}}
{{- define "weaverbird.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weaverbird.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Full label set for metadata: selector labels plus version, chart and ownership. */}}
{{- define "weaverbird.labels" -}}
{{ include "weaverbird.selectorLabels" . }}
app.kubernetes.io/part-of: weaverbird
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- with .root.Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
helm.sh/chart: {{ include "weaverbird.chart" .root }}
{{- with .root.Values.global.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Environment-variable prefix of a service's settings class (EMBEDDER_, RETRIEVER_, ...). */}}
{{- define "weaverbird.envPrefix" -}}
{{- upper . }}
{{- end }}

{{- define "weaverbird.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "weaverbird.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image reference. Call with (dict "root" $ "image" .Values.x.image). A per-image registry wins over
global.image.registry; the tag falls back to global.image.tag, then to the chart's appVersion.
*/}}
{{- define "weaverbird.image" -}}
{{- $registry := .image.registry | default .root.Values.global.image.registry -}}
{{- $tag := .image.tag | default .root.Values.global.image.tag | default .root.Chart.AppVersion -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $registry) .image.repository (toString $tag) -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (toString $tag) -}}
{{- end -}}
{{- end }}

{{/* host:port of a WeaverBird component's gRPC Service inside the namespace. */}}
{{- define "weaverbird.grpcAddr" -}}
{{- printf "%s:%v" (include "weaverbird.componentName" .) .root.Values.global.grpcPort }}
{{- end }}

{{/*
Host names the gateway serves (GATEWAY_ALLOWED_HOSTS, JSON): loopback (port-forward), its Service's
DNS names (in-cluster clients), the Ingress host and gateway.allowedHosts; "*" when the Ingress answers
every host and nothing narrower is listed.
*/}}
{{- define "weaverbird.gatewayAllowedHosts" -}}
{{- $g := .Values.gateway }}
{{- $svc := include "weaverbird.componentName" (dict "root" . "component" "gateway") }}
{{- $ns := .Release.Namespace }}
{{- $hosts := list "localhost" "127.0.0.1" "[::1]" $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) }}
{{- if and $g.ingress.enabled $g.ingress.host }}
{{- $hosts = append $hosts $g.ingress.host }}
{{- else if and $g.ingress.enabled (not $g.allowedHosts) }}
{{- $hosts = append $hosts "*" }}
{{- end }}
{{- concat $hosts ($g.allowedHosts | default list) | uniq | toJson }}
{{- end }}

{{/* Container port of the HTTP gateway (GATEWAY_PORT); its Service maps port 80 to it. */}}
{{- define "weaverbird.gatewayPort" -}}
8080
{{- end }}

{{/* Qdrant URL for store=server: explicit URL, else the companion release, else empty. */}}
{{- define "weaverbird.qdrantUrl" -}}
{{- if .Values.retriever.qdrant.url }}
{{- .Values.retriever.qdrant.url }}
{{- else if .Values.qdrant.enabled }}
{{- printf "http://%s-qdrant:6333" .Release.Name }}
{{- end }}
{{- end }}

{{/* Kafka bootstrap servers: explicit list, else the companion release, else empty (no Kafka). */}}
{{- define "weaverbird.kafkaBootstrap" -}}
{{- if .Values.kafkaConnection.bootstrapServers }}
{{- .Values.kafkaConnection.bootstrapServers }}
{{- else if .Values.kafka.enabled }}
{{- printf "%s-kafka:9092" .Release.Name }}
{{- end }}
{{- end }}

{{/* Base URL of the in-release LLM server. */}}
{{- define "weaverbird.llmUrl" -}}
{{- printf "http://%s:%v" (include "weaverbird.componentName" (dict "root" . "component" "llm")) .Values.llm.port }}
{{- end }}

{{- define "weaverbird.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "weaverbird.fullname" .)) }}
{{- end }}

{{/* True when a secret key is available: an existing Secret is named, or the value was given. */}}
{{- define "weaverbird.hasSecret" -}}
{{- if or .root.Values.secrets.existingSecret (index .root.Values.secrets .value) }}true{{ end }}
{{- end }}

{{/* Shutdown timings of a component: its own values, else the global ones. */}}
{{- define "weaverbird.shutdownGrace" -}}
{{- $v := index .root.Values .component }}
{{- if hasKey $v "shutdownGraceSeconds" }}{{ $v.shutdownGraceSeconds }}{{ else }}{{ .root.Values.global.shutdownGraceSeconds }}{{ end }}
{{- end }}

{{- define "weaverbird.terminationGrace" -}}
{{- $v := index .root.Values .component }}
{{- if hasKey $v "terminationGracePeriodSeconds" }}{{ $v.terminationGracePeriodSeconds }}{{ else }}{{ .root.Values.global.terminationGracePeriodSeconds }}{{ end }}
{{- end }}

{{/*
Settings of one service as environment variables, exactly as its settings class names them. The
chart owns these keys; `<component>.env` may add others but may not override them (use the
structured values instead), so the shutdown and port invariants cannot be bypassed.
Returns YAML (a string map) for fromYaml.
*/}}
{{- define "weaverbird.managedEnv" -}}
{{- $root := .root }}
{{- $c := .component }}
{{- $v := index $root.Values $c }}
{{- $p := include "weaverbird.envPrefix" $c }}
{{- $env := dict }}
{{- $_ := set $env (printf "%s_HOST" $p) "0.0.0.0" }}
{{- if eq $c "gateway" }}
{{- /* The HTTP gateway: one HTTP port, no gRPC server, no metrics endpoint, no tracing. */}}
{{- $_ := set $env "GATEWAY_PORT" (include "weaverbird.gatewayPort" $root) }}
{{- else }}
{{- $_ := set $env (printf "%s_GRPC_PORT" $p) (toString $root.Values.global.grpcPort) }}
{{- $_ := set $env (printf "%s_METRICS_PORT" $p) (toString $root.Values.global.metricsPort) }}
{{- end }}
{{- $_ := set $env (printf "%s_LOG_LEVEL" $p) (toString $root.Values.global.logLevel) }}
{{- $_ := set $env (printf "%s_SHUTDOWN_GRACE_S" $p) (include "weaverbird.shutdownGrace" .) }}
{{- if ne $c "gateway" }}
{{- with $root.Values.global.otel.endpoint }}
{{- $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" (toString .) }}
{{- $_ := set $env "OTEL_SERVICE_NAME" (printf "weaverbird-%s" $c) }}
{{- end }}
{{- end }}
{{- $embedder := include "weaverbird.grpcAddr" (dict "root" $root "component" "embedder") }}
{{- $retriever := include "weaverbird.grpcAddr" (dict "root" $root "component" "retriever") }}
{{- if eq $c "embedder" }}
{{- $_ := set $env "EMBEDDER_BACKEND" (toString $v.backend) }}
{{- $_ := set $env "EMBEDDER_DEVICE" (toString $v.device) }}
{{- if $v.modelVolume.existingClaim }}
{{- $_ := set $env "EMBEDDER_MODEL_PATH" (toString $v.modelVolume.mountPath) }}
{{- end }}
{{- else if eq $c "retriever" }}
{{- $_ := set $env "RETRIEVER_STORE" (toString $v.store) }}
{{- $_ := set $env "RETRIEVER_COLLECTION" (toString $v.collection) }}
{{- if eq $v.store "server" }}
{{- $_ := set $env "RETRIEVER_QDRANT_URL" (include "weaverbird.qdrantUrl" $root) }}
{{- else }}
{{- $_ := set $env "RETRIEVER_DATA_DIR" (toString $v.persistence.mountPath) }}
{{- end }}
{{- else if eq $c "generator" }}
{{- if $root.Values.llm.enabled }}
{{- $_ := set $env "GENERATOR_ENDPOINT" (include "weaverbird.llmUrl" $root) }}
{{- else if $v.endpoint }}
{{- $_ := set $env "GENERATOR_ENDPOINT" (toString $v.endpoint) }}
{{- else }}
{{- $_ := set $env "GENERATOR_MODEL" (toString $v.model) }}
{{- end }}
{{- else if eq $c "orchestrator" }}
{{- $_ := set $env "ORCHESTRATOR_EMBEDDER_ADDR" $embedder }}
{{- $_ := set $env "ORCHESTRATOR_RETRIEVER_ADDR" $retriever }}
{{- $_ := set $env "ORCHESTRATOR_GENERATOR_ADDR" (include "weaverbird.grpcAddr" (dict "root" $root "component" "generator")) }}
{{- $_ := set $env "ORCHESTRATOR_WEB_PROVIDER" (toString $v.web.provider) }}
{{- if ne $v.web.provider "none" }}
{{- with $v.web.baseUrl }}
{{- $_ := set $env "ORCHESTRATOR_WEB_BASE_URL" (toString .) }}
{{- end }}
{{- $_ := set $env "ORCHESTRATOR_WEB_PAGES" (toString $v.web.pages) }}
{{- $_ := set $env "ORCHESTRATOR_WEB_DEADLINE_S" (toString $v.web.deadlineSeconds) }}
{{- $_ := set $env "ORCHESTRATOR_WEB_ALLOW_HOSTS" ($v.web.allowHosts | default list | toJson) }}
{{- end }}
{{- else if eq $c "ingester" }}
{{- $_ := set $env "INGESTER_EMBEDDER_ADDR" $embedder }}
{{- $_ := set $env "INGESTER_RETRIEVER_ADDR" $retriever }}
{{- $_ := set $env "INGESTER_DATA_DIR" "/var/lib/weaverbird/ingester" }}
{{- with $v.fetchAllowHosts }}
{{- $_ := set $env "INGESTER_FETCH_ALLOW_HOSTS" (toJson .) }}
{{- end }}
{{- else if eq $c "gateway" }}
{{- $_ := set $env "GATEWAY_ORCHESTRATOR_ADDR" (include "weaverbird.grpcAddr" (dict "root" $root "component" "orchestrator")) }}
{{- $_ := set $env "GATEWAY_INGESTER_ADDR" (include "weaverbird.grpcAddr" (dict "root" $root "component" "ingester")) }}
{{- $_ := set $env "GATEWAY_MAX_UPLOAD_MB" (toString $v.maxUploadMB) }}
{{- $_ := set $env "GATEWAY_ALLOWED_HOSTS" (include "weaverbird.gatewayAllowedHosts" $root) }}
{{- with $v.allowedOrigins }}
{{- $_ := set $env "GATEWAY_ALLOWED_ORIGINS" (toJson .) }}
{{- end }}
{{- end }}
{{- if and (has $c (list "orchestrator" "ingester")) (include "weaverbird.kafkaBootstrap" $root) }}
{{- $k := $root.Values.kafkaConnection }}
{{- $_ := set $env (printf "%s_KAFKA__BOOTSTRAP_SERVERS" $p) (include "weaverbird.kafkaBootstrap" $root) }}
{{- $_ := set $env (printf "%s_KAFKA__INGEST_TOPIC" $p) (toString $k.ingestTopic) }}
{{- $_ := set $env (printf "%s_KAFKA__DEAD_LETTER_TOPIC" $p) (toString $k.deadLetterTopic) }}
{{- $_ := set $env (printf "%s_KAFKA__SECURITY_PROTOCOL" $p) (toString $k.securityProtocol) }}
{{- if hasPrefix "SASL_" $k.securityProtocol }}
{{- $login := include "weaverbird.kafkaLogin" . | fromYaml }}
{{- $_ := set $env (printf "%s_KAFKA__SASL_MECHANISM" $p) (toString $k.saslMechanism) }}
{{- $_ := set $env (printf "%s_KAFKA__SASL_USERNAME" $p) (toString $login.username) }}
{{- end }}
{{- end }}
{{- $env = merge $env (include "weaverbird.securityEnv" . | fromYaml) }}
{{- toYaml $env }}
{{- end }}

{{/* Managed settings merged with the user's `env`; fails on an attempt to override a managed key. */}}
{{- define "weaverbird.settingsEnv" -}}
{{- $managed := include "weaverbird.managedEnv" . | fromYaml }}
{{- $v := index .root.Values .component }}
{{- $p := include "weaverbird.envPrefix" .component }}
{{- $all := deepCopy $managed }}
{{- range $key, $value := ($v.env | default dict) }}
{{- if hasKey $managed $key }}
{{- fail (printf "%s.env.%s is set by the chart; use the structured values (see values.yaml) instead" $.component $key) }}
{{- end }}
{{- if not (or (hasPrefix (printf "%s_" $p) $key) (hasPrefix "OTEL_" $key)) }}
{{- fail (printf "%s.env.%s: only %s_* settings (and OTEL_*) belong to this service" $.component $key $p) }}
{{- end }}
{{- $_ := set $all $key (toString $value) }}
{{- end }}
{{- toYaml $all }}
{{- end }}

{{/*
Environment variables read from the Secret, only for the features that use them. A required key
(web API key, SASL password) is not optional, so a missing key stops the pod with a clear event
instead of a half-configured service.
*/}}
{{- define "weaverbird.secretEnv" -}}
{{- $root := .root }}
{{- $c := .component }}
{{- $p := include "weaverbird.envPrefix" $c }}
{{- $secret := include "weaverbird.secretName" $root }}
{{- $refs := list }}
{{- if and (eq $c "orchestrator") (has $root.Values.orchestrator.web.provider (list "brave" "tavily")) }}
{{- $refs = append $refs (dict "name" "ORCHESTRATOR_WEB_API_KEY" "key" "web-api-key" "optional" false) }}
{{- end }}
{{- if and (has $c (list "orchestrator" "ingester")) (include "weaverbird.kafkaBootstrap" $root) (hasPrefix "SASL_" $root.Values.kafkaConnection.securityProtocol) }}
{{- $login := include "weaverbird.kafkaLogin" . | fromYaml }}
{{- $refs = append $refs (dict "name" (printf "%s_KAFKA__SASL_PASSWORD" $p) "secret" $login.secretName "key" $login.secretKey "optional" false) }}
{{- end }}
{{- if and (has $c (list "orchestrator" "ingester")) (include "weaverbird.kafkaBootstrap" $root) (include "weaverbird.hasSecret" (dict "root" $root "value" "kafkaSigningKey")) }}
{{- /* Producers sign ingest records with it and the ingester checks them (issue 34); optional with an existingSecret. */}}
{{- $refs = append $refs (dict "name" (printf "%s_KAFKA__SIGNING_KEY" $p) "key" "kafka-signing-key" "optional" (not $root.Values.secrets.kafkaSigningKey)) }}
{{- end }}
{{- if and (eq $c "gateway") $root.Values.gateway.defaultTokenSecret.name }}
{{- $t := $root.Values.gateway.defaultTokenSecret }}
{{- $refs = append $refs (dict "name" "GATEWAY_DEFAULT_TOKEN" "secret" $t.name "key" ($t.key | default "token") "optional" false) }}
{{- end }}
{{- if and (eq $c "retriever") (eq $root.Values.retriever.store "server") (include "weaverbird.hasSecret" (dict "root" $root "value" "qdrantApiKey")) }}
{{- $refs = append $refs (dict "name" "RETRIEVER_QDRANT_API_KEY" "key" "qdrant-api-key" "optional" (not $root.Values.secrets.qdrantApiKey)) }}
{{- end }}
{{- if and (eq $c "generator") (not $root.Values.llm.enabled) $root.Values.generator.endpoint (include "weaverbird.hasSecret" (dict "root" $root "value" "generatorApiKey")) }}
{{- $refs = append $refs (dict "name" "GENERATOR_API_KEY" "key" "generator-api-key" "optional" (not $root.Values.secrets.generatorApiKey)) }}
{{- end }}
{{- range $refs }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret | default $secret }}
      key: {{ .key }}
      optional: {{ .optional }}
{{- end }}
{{- end }}

{{/* Pod and container security contexts: global defaults, overridable per component. */}}
{{- define "weaverbird.podSecurityContext" -}}
{{- $own := .own | default dict }}
{{- toYaml (mustMergeOverwrite (deepCopy .root.Values.global.podSecurityContext) $own) }}
{{- end }}

{{- define "weaverbird.containerSecurityContext" -}}
{{- $own := .own | default dict }}
{{- toYaml (mustMergeOverwrite (deepCopy .root.Values.global.containerSecurityContext) $own) }}
{{- end }}

{{/* Native gRPC probes (grpc.health.v1, overall server status "") with per-probe timings. */}}
{{- define "weaverbird.grpcProbes" -}}
{{- /* With TLS on, kubelet (no client certificate) checks the plaintext health port instead. */}}
{{- $port := ternary .root.Values.global.healthPort .root.Values.global.grpcPort (eq .root.Values.tls.enabled true) }}
{{- range $kind := list "startup" "readiness" "liveness" }}
{{- $p := index $.probes $kind | default dict }}
{{ $kind }}Probe:
  grpc:
    port: {{ $port }}
  periodSeconds: {{ $p.periodSeconds | default 10 }}
  timeoutSeconds: {{ $p.timeoutSeconds | default 2 }}
  failureThreshold: {{ $p.failureThreshold | default 3 }}
{{- end }}
{{- end }}

{{/*
HTTP probes of the gateway: liveness and startup on /healthz (the process answers), readiness on
/readyz (the orchestrator's grpc.health.v1 is SERVING), so an Ingress sends no request to a gateway
whose orchestrator is down.
*/}}
{{- define "weaverbird.httpProbes" -}}
{{- range $kind, $path := dict "startup" "/healthz" "readiness" "/readyz" "liveness" "/healthz" }}
{{- $p := index $.probes $kind | default dict }}
{{ $kind }}Probe:
  httpGet:
    path: {{ $path }}
    port: http
  periodSeconds: {{ $p.periodSeconds | default 10 }}
  timeoutSeconds: {{ $p.timeoutSeconds | default 2 }}
  failureThreshold: {{ $p.failureThreshold | default 3 }}
{{- end }}
{{- end }}

{{/*
nginx size ("600", "64k", "51m", "1g"; "0" = unlimited) in bytes, or "" when it cannot be read.
*/}}
{{- define "weaverbird.nginxSizeBytes" -}}
{{- $s := lower (toString .) }}
{{- if regexMatch "^[0-9]+[kmg]?$" $s }}
{{- $unit := dict "" 1 "k" 1024 "m" 1048576 "g" 1073741824 }}
{{- mul (atoi (regexFind "^[0-9]+" $s)) (index $unit (regexReplaceAll "^[0-9]+" $s "")) }}
{{- end }}
{{- end }}

{{/*
Ingress annotations of the gateway: the values' annotations, plus (ingress-nginx) a request body
limit one MiB above GATEWAY_MAX_UPLOAD_MB, for the multipart framing around the file, unless the
values give one.
*/}}
{{- define "weaverbird.gatewayIngressAnnotations" -}}
{{- $g := .Values.gateway }}
{{- $a := deepCopy ($g.ingress.annotations | default dict) }}
{{- if not (hasKey $a "nginx.ingress.kubernetes.io/proxy-body-size") }}
{{- $_ := set $a "nginx.ingress.kubernetes.io/proxy-body-size" (printf "%dm" (int (ceil (addf $g.maxUploadMB 1)))) }}
{{- end }}
{{- toYaml $a }}
{{- end }}

{{/* Preferred spreading of a component's replicas over nodes, when no affinity is given. */}}
{{- define "weaverbird.affinity" -}}
{{- if .affinity }}
{{- toYaml .affinity }}
{{- else }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "weaverbird.selectorLabels" . | nindent 12 }}
{{- end }}
{{- end }}

{{/* data: of the chart-managed Secret (base64), only the keys that have values. */}}
{{- define "weaverbird.secretData" -}}
{{- $s := .Values.secrets }}
{{- range $key, $value := dict "web-api-key" $s.webApiKey "kafka-sasl-password" $s.kafkaSaslPassword "kafka-signing-key" $s.kafkaSigningKey "qdrant-api-key" $s.qdrantApiKey "generator-api-key" $s.generatorApiKey "hf-token" $s.huggingfaceToken }}
{{- if $value }}
{{ $key }}: {{ $value | toString | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Cross-field checks the schema cannot express. Each failure names the values to change.
*/}}
{{- define "weaverbird.validate" -}}
{{- $g := .Values.global }}
{{- range $c := list "embedder" "retriever" "generator" "orchestrator" "ingester" "gateway" }}
{{- $v := index $.Values $c }}
{{- if $v.enabled }}
{{- $ctx := dict "root" $ "component" $c }}
{{- $grace := include "weaverbird.shutdownGrace" $ctx | float64 }}
{{- $termination := include "weaverbird.terminationGrace" $ctx | float64 }}
{{- if le $termination (addf $grace $g.preStopSleepSeconds) }}
{{- fail (printf "%s: terminationGracePeriodSeconds (%v) must exceed global.preStopSleepSeconds (%v) + shutdownGraceSeconds (%v), or in-flight RPCs are killed" $c $termination $g.preStopSleepSeconds $grace) }}
{{- end }}
{{- end }}
{{- end }}
{{- $r := .Values.retriever }}
{{- if and $r.enabled (ne $r.store "server") (or (gt (int $r.replicaCount) 1) $r.autoscaling.enabled) }}
{{- fail (printf "retriever.store=%s is an embedded, single-writer store: keep retriever.replicaCount=1 and autoscaling off, or use store=server" $r.store) }}
{{- end }}
{{- if and $r.enabled (eq $r.store "server") (not (include "weaverbird.qdrantUrl" .)) }}
{{- fail "retriever.store=server needs retriever.qdrant.url or qdrant.enabled=true (a <release>-qdrant release)" }}
{{- end }}
{{- $web := .Values.orchestrator.web }}
{{- if and (eq $web.provider "searxng") (not $web.baseUrl) }}
{{- fail "orchestrator.web.provider=searxng needs orchestrator.web.baseUrl" }}
{{- end }}
{{- if and (has $web.provider (list "brave" "tavily")) (not (include "weaverbird.hasSecret" (dict "root" $ "value" "webApiKey"))) }}
{{- fail (printf "orchestrator.web.provider=%s needs an API key: secrets.webApiKey or secrets.existingSecret (key web-api-key)" $web.provider) }}
{{- end }}
{{- $k := .Values.kafkaConnection }}
{{- if and (include "weaverbird.kafkaBootstrap" .) (hasPrefix "SASL_" $k.securityProtocol) }}
{{- range $c := list "orchestrator" "ingester" }}
{{- if (index $.Values $c).enabled }}
{{- $login := include "weaverbird.kafkaLogin" (dict "root" $ "component" $c) | fromYaml }}
{{- if not (and $k.saslMechanism $login.username $login.secretName) }}
{{- fail (printf "kafkaConnection.securityProtocol=%s needs saslMechanism, and for the %s a user and a password: kafkaConnection.users.%s (username, passwordSecret), kafka.strimziUsers.enabled, or saslUsername with secrets.kafkaSaslPassword (or secrets.existingSecret, key kafka-sasl-password)" $k.securityProtocol $c $c) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- include "weaverbird.validateSecurity" . }}
{{- if and .Values.llm.enabled .Values.generator.endpoint }}
{{- fail "set either llm.enabled (in-release LLM server) or generator.endpoint (external), not both" }}
{{- end }}
{{- $gw := .Values.gateway }}
{{- if $gw.enabled }}
{{- if not (and .Values.orchestrator.enabled .Values.ingester.enabled) }}
{{- fail "gateway.enabled needs orchestrator.enabled and ingester.enabled (it calls both); disable the gateway or enable them" }}
{{- end }}
{{- $ingesterLimit := index (.Values.ingester.env | default dict) "INGESTER_MAX_DOCUMENT_MB" | default 50 | float64 }}
{{- if gt (float64 $gw.maxUploadMB) $ingesterLimit }}
{{- fail (printf "gateway.maxUploadMB (%v) exceeds the ingester's INGESTER_MAX_DOCUMENT_MB (%v): uploads the gateway accepts would be refused; raise ingester.env.INGESTER_MAX_DOCUMENT_MB or lower gateway.maxUploadMB" $gw.maxUploadMB $ingesterLimit) }}
{{- end }}
{{- /* The file travels in one AddDocument message: it must fit both ends' gRPC limit, with room for the rest. */}}
{{- range $side := list (list "gateway" "GATEWAY_MAX_MESSAGE_MB") (list "ingester" "INGESTER_MAX_MESSAGE_MB") }}
{{- $limit := index ((index $.Values (first $side)).env | default dict) (last $side) | default 64 | float64 }}
{{- if gt (addf $gw.maxUploadMB 1) $limit }}
{{- fail (printf "gateway.maxUploadMB (%v) needs a gRPC message limit above it: set %s.env.%s to at least %v" $gw.maxUploadMB (first $side) (last $side) (int (ceil (addf $gw.maxUploadMB 1)))) }}
{{- end }}
{{- end }}
{{- if $gw.ingress.enabled }}
{{- $size := index (include "weaverbird.gatewayIngressAnnotations" . | fromYaml) "nginx.ingress.kubernetes.io/proxy-body-size" }}
{{- if $size }}
{{- $bytes := include "weaverbird.nginxSizeBytes" $size }}
{{- if not $bytes }}
{{- fail (printf "gateway.ingress.annotations: nginx.ingress.kubernetes.io/proxy-body-size=%q is not an nginx size (e.g. 51m)" (toString $size)) }}
{{- end }}
{{- /* The gateway itself admits the file plus 64 KiB of multipart framing. */}}
{{- if and (ne (int64 $bytes) 0) (lt (int64 $bytes) (int64 (addf (mulf $gw.maxUploadMB 1048576) 65536))) }}
{{- fail (printf "gateway.ingress.annotations: nginx.ingress.kubernetes.io/proxy-body-size=%s is below gateway.maxUploadMB (%v MiB): ingress-nginx would refuse uploads the gateway accepts" (toString $size) $gw.maxUploadMB) }}
{{- end }}
{{- end }}
{{- if and $gw.ingress.tls.enabled (not $gw.ingress.host) }}
{{- fail "gateway.ingress.tls.enabled needs gateway.ingress.host (the certificate's name)" }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
