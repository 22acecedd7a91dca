{{/*
Egress rules of the NetworkPolicies (networkpolicy.yaml). Each pod may open connections only to:
DNS; the WeaverBird peers it calls (docs/architecture.md); Kafka, Qdrant, the OTLP collector and
the LLM endpoint where they are configured; and, for the components that fetch from the web, the
public internet (networkPolicy.egress.internet: every address but the private, loopback,
link-local and other special ranges).

A dependency named by URL or host:port is reached on its own port only, at:
  1. networkPolicy.egress.<dependency>.to when given (ipBlocks of a managed Kafka, say);
  2. the companion release's pods (<release>-kafka, <release>-qdrant) when that is what is used;
  3. any pod of the cluster for an in-cluster name (no dot, or a .svc name);
  4. otherwise the public internet (LLM endpoint, search API), or any address for Kafka, Qdrant and
     the collector, which usually live on private networks: narrow those with `to`.
*/}}

{{/* host and port of a URL (default port from the scheme), as YAML for fromYaml. */}}
{{- define "weaverbird.urlHostPort" -}}
{{- $u := urlParse . }}
{{- $host := $u.host }}
{{- $port := ternary "443" "80" (eq $u.scheme "https") }}
{{- if regexMatch ":[0-9]+$" $host }}
{{- $port = regexFind "[0-9]+$" $host }}
{{- $host = regexReplaceAll ":[0-9]+$" $host "" }}
{{- end }}
{{- toYaml (dict "host" $host "port" (atoi $port)) }}
{{- end }}

{{/* True for a name that only cluster DNS resolves: no dot, or <svc>.<ns>.svc[.cluster.local]. */}}
{{- define "weaverbird.inClusterHost" -}}
{{- if regexMatch "^[^.]+$|\\.svc(\\.|$)" . }}true{{ end }}
{{- end }}

{{/* The public-internet peers (ipBlocks with the private ranges excepted). */}}
{{- define "weaverbird.internetPeers" -}}
{{- $peers := list }}
{{- range .Values.networkPolicy.egress.internet.ipBlocks }}
{{- $peers = append $peers (dict "ipBlock" .) }}
{{- end }}
{{- toYaml $peers }}
{{- end }}

{{/*
Peers of one dependency. Call with (dict "root" $ "host" "kafka-0.kafka" "to" <override list>
"fallback" "internet"|"any" "companion" <matchLabels or nil>).
*/}}
{{- define "weaverbird.dependencyPeers" -}}
{{- if .to }}
{{- toYaml .to }}
{{- else if .companion }}
{{- toYaml (list (dict "podSelector" (dict "matchLabels" .companion))) }}
{{- else if include "weaverbird.inClusterHost" .host }}
{{- toYaml (list (dict "namespaceSelector" (dict))) }}
{{- else if eq .fallback "internet" }}
{{- include "weaverbird.internetPeers" .root }}
{{- else }}
{{- toYaml (list (dict "ipBlock" (dict "cidr" "0.0.0.0/0")) (dict "ipBlock" (dict "cidr" "::/0"))) }}
{{- end }}
{{- end }}

{{/* TCP port list from numbers or port names. */}}
{{- define "weaverbird.tcpPorts" -}}
{{- $ports := list }}
{{- range . }}
{{- $ports = append $ports (dict "port" . "protocol" "TCP") }}
{{- end }}
{{- toYaml $ports }}
{{- end }}

{{/*
Egress rules of one component, as a YAML list. Call with (dict "root" $ "component" "orchestrator").
Fails on a rule without peers: an empty `to` would allow every destination.
*/}}
{{- define "weaverbird.egressRules" -}}
{{- $root := .root }}
{{- $c := .component }}
{{- $v := index $root.Values $c }}
{{- $e := $root.Values.networkPolicy.egress }}
{{- $rules := list }}
{{- $rules = append $rules (dict "name" "dns" "to" $e.dns.to "ports" $e.dns.ports) }}

{{- /* WeaverBird peers: the callees of each component (the NetworkPolicy ingress rules are the mirror image). */}}
{{- $callees := dict "orchestrator" (list "embedder" "retriever" "generator") "ingester" (list "embedder" "retriever") "gateway" (list "orchestrator" "ingester") }}
{{- range $peer := (index $callees $c | default list) }}
{{- if (index $root.Values $peer).enabled }}
{{- $labels := include "weaverbird.selectorLabels" (dict "root" $root "component" $peer) | fromYaml }}
{{- $rules = append $rules (dict "name" $peer "to" (list (dict "podSelector" (dict "matchLabels" $labels))) "ports" (include "weaverbird.tcpPorts" (list "grpc") | fromYamlArray)) }}
{{- end }}
{{- end }}

{{- /* Kafka: the orchestrator publishes web documents, the ingester consumes. */}}
{{- $bootstrap := include "weaverbird.kafkaBootstrap" $root }}
{{- if and $bootstrap (has $c (list "orchestrator" "ingester")) }}
{{- $ports := dict }}
{{- $host := "" }}
{{- range $server := splitList "," $bootstrap }}
{{- $server = trim $server }}
{{- if $server }}
{{- $host = $host | default (regexReplaceAll ":[0-9]+$" $server "") }}
{{- $_ := set $ports (regexFind "[0-9]+$" $server | default "9092") true }}
{{- end }}
{{- end }}
{{- $companion := dict }}
{{- if and $root.Values.kafka.enabled (not $root.Values.kafkaConnection.bootstrapServers) }}
{{- $companion = dict "app.kubernetes.io/instance" (printf "%s-kafka" $root.Release.Name) }}
{{- end }}
{{- $portNumbers := list }}
{{- range $p := keys $ports | sortAlpha }}
{{- $portNumbers = append $portNumbers (atoi $p) }}
{{- end }}
{{- $to := include "weaverbird.dependencyPeers" (dict "root" $root "host" $host "to" $e.kafka.to "fallback" "any" "companion" $companion) | fromYamlArray }}
{{- $rules = append $rules (dict "name" "kafka" "to" $to "ports" (include "weaverbird.tcpPorts" $portNumbers | fromYamlArray)) }}
{{- end }}

{{- /* Qdrant server behind the retriever. */}}
{{- if and (eq $c "retriever") (eq $v.store "server") }}
{{- $u := include "weaverbird.urlHostPort" (include "weaverbird.qdrantUrl" $root) | fromYaml }}
{{- $companion := dict }}
{{- if and $root.Values.qdrant.enabled (not $v.qdrant.url) }}
{{- $companion = dict "app.kubernetes.io/instance" (printf "%s-qdrant" $root.Release.Name) }}
{{- end }}
{{- $to := include "weaverbird.dependencyPeers" (dict "root" $root "host" $u.host "to" $e.qdrant.to "fallback" "any" "companion" $companion) | fromYamlArray }}
{{- $rules = append $rules (dict "name" "qdrant" "to" $to "ports" (include "weaverbird.tcpPorts" (list $u.port) | fromYamlArray)) }}
{{- end }}

{{- /* The generator's LLM: the in-release server, or the endpoint (public internet unless `to` says otherwise). */}}
{{- if eq $c "generator" }}
{{- if $root.Values.llm.enabled }}
{{- $labels := include "weaverbird.selectorLabels" (dict "root" $root "component" "llm") | fromYaml }}
{{- $rules = append $rules (dict "name" "llm" "to" (list (dict "podSelector" (dict "matchLabels" $labels))) "ports" (include "weaverbird.tcpPorts" (list "http") | fromYamlArray)) }}
{{- else if $v.endpoint }}
{{- $u := include "weaverbird.urlHostPort" $v.endpoint | fromYaml }}
{{- $to := include "weaverbird.dependencyPeers" (dict "root" $root "host" $u.host "to" $e.generatorEndpoint.to "fallback" "internet") | fromYamlArray }}
{{- $rules = append $rules (dict "name" "generator-endpoint" "to" $to "ports" (include "weaverbird.tcpPorts" (list $u.port) | fromYamlArray)) }}
{{- end }}
{{- end }}

{{- /* The web path: the search provider and the pages it finds. */}}
{{- if and (eq $c "orchestrator") (ne $v.web.provider "none") }}
{{- if and (eq $v.web.provider "searxng") $v.web.baseUrl }}
{{- $u := include "weaverbird.urlHostPort" $v.web.baseUrl | fromYaml }}
{{- $to := include "weaverbird.dependencyPeers" (dict "root" $root "host" $u.host "to" $e.webSearch.to "fallback" "internet") | fromYamlArray }}
{{- $rules = append $rules (dict "name" "web-search" "to" $to "ports" (include "weaverbird.tcpPorts" (list $u.port) | fromYamlArray)) }}
{{- end }}
{{- $rules = append $rules (dict "name" "internet" "to" (include "weaverbird.internetPeers" $root | fromYamlArray) "ports" $e.internet.ports) }}
{{- end }}
{{- if and (eq $c "ingester") $e.internet.ingester }}
{{- $rules = append $rules (dict "name" "internet" "to" (include "weaverbird.internetPeers" $root | fromYamlArray) "ports" $e.internet.ports) }}
{{- end }}
{{- /* The LLM server downloads its weights from the Hub unless they come from a volume. */}}
{{- if and (eq $c "llm") (not $v.model.volume.existingClaim) }}
{{- $rules = append $rules (dict "name" "internet" "to" (include "weaverbird.internetPeers" $root | fromYamlArray) "ports" $e.internet.ports) }}
{{- end }}

{{- /* Traces. The LLM server and the gateway get no OTEL_* settings from the chart, so no rule either. */}}
{{- with $root.Values.global.otel.endpoint }}
{{- if not (has $c (list "llm" "gateway")) }}
{{- $u := include "weaverbird.urlHostPort" . | fromYaml }}
{{- $to := include "weaverbird.dependencyPeers" (dict "root" $root "host" $u.host "to" $e.otel.to "fallback" "any") | fromYamlArray }}
{{- $rules = append $rules (dict "name" "otel" "to" $to "ports" (include "weaverbird.tcpPorts" (list $u.port) | fromYamlArray)) }}
{{- end }}
{{- end }}

{{- $out := list }}
{{- range $rules }}
{{- if not .to }}
{{- fail (printf "%s: the egress rule for %s has no peers, which would allow every destination; set networkPolicy.egress.%s.to" $c .name .name) }}
{{- end }}
{{- $rule := dict "to" .to }}
{{- with .ports }}
{{- $_ := set $rule "ports" . }}
{{- end }}
{{- $out = append $out $rule }}
{{- end }}
{{- range (index ($e.extra | default dict) $c | default list) }}
{{- $out = append $out . }}
{{- end }}
{{- toYaml $out }}
{{- end }}
